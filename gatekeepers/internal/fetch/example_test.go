package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gadgetd/gadgetd/gatekeepers/internal/fetch"
)

func Example() {
	// A service on loopback, which the operator allowed explicitly.
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	}))
	defer service.Close()

	client, err := fetch.New([]fetch.Prefix{{URL: service.URL + "/v1/", AllowPrivate: true}})
	if err != nil {
		panic(err)
	}
	defer client.CloseIdleConnections()

	// The gadget's headers are filtered; the gatekeeper adds its own after.
	gadgetHeader := http.Header{"Accept": {"text/plain"}, "Authorization": {"Bearer stolen"}}
	resp, err := client.Do(context.Background(), &fetch.Request{
		URL:    service.URL + "/v1/items",
		Header: fetch.GadgetHeaders(gadgetHeader),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Status, string(resp.Body))

	_, err = client.Do(context.Background(), &fetch.Request{URL: service.URL + "/v1/../admin"})
	fmt.Println(errors.Is(err, fetch.ErrOutsidePrefixes))
	// Output:
	// 200 GET /v1/items
	// true
}

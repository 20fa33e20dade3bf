package web_test

import (
	"fmt"
	"io"
	"net/http/httptest"

	"github.com/gadgetd/gadgetd/web"
)

// The handler is plain net/http: serve it on any listener.
func ExampleHandler() {
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/healthz")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(string(body))
	// Output: ok
}

package http_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gadgetd/gadgetd/gatekeepers"
	httpkind "github.com/gadgetd/gadgetd/gatekeepers/http"
	"github.com/gadgetd/gadgetd/gatekeepers/http/httppb"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/callstest"
)

func Example() {
	// A service on loopback, which the operator allows explicitly.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Println(strings.TrimSpace("the API received " + r.Method + " " + r.URL.Path + " " + string(body)))
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	}))
	defer api.Close()

	// [services.api] kind = "http", prefixes = [...], allow_private = [...]
	svc, err := httpkind.NewService("api", gatekeepers.ServiceConfig{Settings: map[string]any{
		"prefixes":      []any{api.URL + "/"},
		"allow_private": []any{api.URL + "/"},
	}})
	if err != nil {
		panic(err)
	}
	// A binding grants one prefix under the service's.
	resource, err := svc.Resource(api.URL + "/v1")
	if err != nil {
		panic(err)
	}
	b := gatekeepers.Binding{Name: "api", Kind: httpkind.KindName, Resource: resource}
	calls := callstest.New(b) // the kernel's Calls is the durable ledger
	gk := httppb.Http(svc.Gatekeeper(b, calls))
	defer gk.Release()
	ctx := context.Background()

	// An observation is made at once.
	got, release := gk.Get(ctx, func(p httppb.Http_get_Params) error { return p.SetUrl(api.URL + "/v1/items") })
	resp, err := got.Response().Struct()
	if err != nil {
		panic(err)
	}
	body, _ := resp.Body()
	fmt.Println(resp.Status(), string(body))
	release()

	// Outside the binding's prefix: refused, nothing sent.
	refused, release := gk.Get(ctx, func(p httppb.Http_get_Params) error { return p.SetUrl(api.URL + "/admin") })
	_, err = refused.Struct()
	fmt.Println("refused:", err != nil)
	release()

	// An action is queued, not sent...
	sent, release := gk.Send(ctx, func(p httppb.Http_send_Params) error {
		p.SetMethod("POST")
		p.SetBody([]byte("new item"))
		return p.SetUrl(api.URL + "/v1/items")
	})
	action, err := sent.Action().Struct()
	if err != nil {
		panic(err)
	}
	description, _ := action.Description()
	fmt.Println("pending:", strings.Replace(description, api.URL, "API", 1))
	release()

	// ...until a human approves it, and the kernel applies it.
	out, err := svc.Apply(ctx, b, calls.Actions()[0])
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Replace(out.Describe, api.URL, "API", 1))
	// Output:
	// the API received GET /v1/items
	// 200 hello from /v1/items
	// refused: true
	// pending: POST "API/v1/items" (8 bytes)
	// the API received POST /v1/items new item
	// POST "API/v1/items" (8 bytes): 200 OK
}

package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/gadgetd/gadgetd/internal/wsclient"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/web"
)

// Serve Cap'n Proto over websocket for a gadgetd server, as `gadgetd serve`
// does: /ws bootstraps the Gateway. A client sends each Cap'n Proto message
// in one binary websocket message (internal/wsclient is such a Go client;
// web/js the browser's).
func ExampleWithCapnp() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "gadgetd-example-")
	defer os.RemoveAll(dir)
	srv, err := server.Open(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer srv.Close(ctx)
	h := httptest.NewServer(web.Handler(web.WithCapnp(srv), web.WithAllowedOrigins("https://shell.example")))
	defer h.Close()
	url := "ws" + strings.TrimPrefix(h.URL, "http") + "/ws"

	// A page from an origin that is neither the server's nor allowed is
	// refused before any Cap'n Proto.
	_, err = wsclient.Dial(ctx, url, wsclient.WithHeader(http.Header{"Origin": {"https://elsewhere.example"}}))
	fmt.Println("from elsewhere:", err.(*wsclient.RefusedError).Status)

	conn, err := wsclient.Dial(ctx, url, wsclient.WithHeader(http.Header{"Origin": {"https://shell.example"}}))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	gateway := schema.Gateway(conn.Bootstrap(ctx))
	defer gateway.Release()
	login, release := gateway.Login(ctx, func(p schema.Gateway_login_Params) error { return p.SetToken("not a token") })
	defer release()
	_, err = login.Struct()
	fmt.Println("from the shell:", err)
	// Output:
	// from elsewhere: 403
	// from the shell: workspace.capnp:Gateway.login: invalid token
}

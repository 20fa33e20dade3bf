package web

import (
	_ "embed"
	"net/http"
)

//go:embed home.html
var homePage []byte

// homeCSP lets the home page style itself and do nothing else: no script,
// no request to anywhere.
const homeCSP = "default-src 'none'; style-src 'unsafe-inline'"

// Handler serves GET /healthz ("ok"), the home page at GET /, and with
// WithCapnp the websocket endpoints (ws.go).
func Handler(opts ...Option) http.Handler {
	cfg := newConfig(opts)
	mux := http.NewServeMux()
	if cfg.capnp != nil {
		ws := newWebsockets(cfg)
		mux.HandleFunc("GET /ws", ws.serveGateway)
		mux.HandleFunc("GET /ws/frame", ws.serveFrame)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", homeCSP)
		w.Write(homePage)
	})
	return mux
}

package web

import (
	"net/http"
)

// Handler serves GET /healthz ("ok"), the browser shell at GET / (shell.go), and with
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
	handleShell(mux) // shell.go
	return mux
}

package web

// Design: the websocket endpoints only check and upgrade. /ws hands the
// upgraded socket to the CapnpServer, which serves the Gateway on it under
// the same guard (internal/rpcguard) as its TCP connections, so every
// bound, deadline and budget of a TCP connection applies unchanged; /ws/frame
// first has the server redeem the ticket, and upgrades only if it was good,
// so a refusal is an ordinary HTTP error the browser can show. After the
// upgrade the connection is the CapnpServer's: the handler's goroutine
// returns at once.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/websocket"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
)

// CapnpServer is the Cap'n Proto server behind the websocket endpoints;
// *server.Server is one. Each method takes ownership of the connection it
// is handed, and serves it under the same guard as the server's TCP
// connections. Each Cap'n Proto message travels in one binary websocket
// message, both ways.
type CapnpServer interface {
	// ServeGatewayConn serves the Gateway on nc, as on a TCP connection.
	ServeGatewayConn(nc net.Conn)
	// ServeFrameConn redeems a frame ticket (Gadget.frameTicket) that the
	// peer at remote presented, and if it is good calls upgrade and serves
	// the ticket's gadget session on the connection upgrade returns, as
	// its only bootstrap. An error it returns before calling upgrade is a
	// refusal to answer over HTTP: one that wraps fs.ErrPermission is the
	// ticket's fault (403), any other the server's (502).
	ServeFrameConn(ctx context.Context, remote, ticket string, upgrade func() (net.Conn, error)) error
}

// websockets serves /ws and /ws/frame.
type websockets struct {
	capnp    CapnpServer
	origins  map[string]bool // allowed besides the request's own, canonical
	upgrader websocket.Upgrader
}

func newWebsockets(cfg config) *websockets {
	h := &websockets{capnp: cfg.capnp, origins: cfg.origins}
	h.upgrader = websocket.Upgrader{
		HandshakeTimeout: cfg.handshakeTimeout,
		CheckOrigin:      h.originAllowed,
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			http.Error(w, reason.Error(), status)
		},
		// No compression: a compressed message could inflate past the
		// size the guard checks on the wire.
	}
	return h
}

// serveGateway upgrades GET /ws and serves the Gateway on it.
func (h *websockets) serveGateway(w http.ResponseWriter, r *http.Request) {
	if !h.checkOrigin(w, r) {
		return
	}
	ws, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered with the HTTP error
	}
	h.capnp.ServeGatewayConn(&wsConn{ws: ws})
}

// serveFrame redeems the ticket of GET /ws/frame?ticket=… and, if it is
// good, upgrades and serves the ticket's gadget session. Everything that
// can refuse the request (its origin, that it is a websocket handshake at
// all, the ticket) is checked before the ticket is used up and before the
// upgrade, so a refusal is an HTTP error with a reason.
func (h *websockets) serveFrame(w http.ResponseWriter, r *http.Request) {
	if !h.checkOrigin(w, r) {
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "/ws/frame is a websocket endpoint: connect with a websocket handshake", http.StatusBadRequest)
		return
	}
	ticket := r.URL.Query().Get("ticket")
	if ticket == "" {
		http.Error(w, "/ws/frame needs ?ticket=…, from Gadget.frameTicket()", http.StatusBadRequest)
		return
	}
	upgraded := false
	err := h.capnp.ServeFrameConn(r.Context(), r.RemoteAddr, ticket, func() (net.Conn, error) {
		upgraded = true
		ws, err := h.upgrader.Upgrade(w, r, nil)
		if err != nil {
			return nil, err
		}
		return &wsConn{ws: ws}, nil
	})
	if err != nil && !upgraded {
		http.Error(w, err.Error(), errorStatus(err))
	}
}

// checkOrigin answers a request whose Origin may not open a websocket
// here with 403, and reports whether it may.
func (h *websockets) checkOrigin(w http.ResponseWriter, r *http.Request) bool {
	if h.originAllowed(r) {
		return true
	}
	http.Error(w, fmt.Sprintf("websocket refused: a page from %q may not connect; only this server's own pages (%s) and the origins its configuration allows may", r.Header.Get("Origin"), r.Host), http.StatusForbidden)
	return false
}

// originAllowed reports whether a page from the request's Origin may open
// a websocket: one of this server's own pages (the origin's host is the
// Host the request was sent to), or one from an origin the operator
// allowed. A request with no Origin header is not from a browser page, and
// a non-browser client can send any header it likes, so it is allowed, as
// gorilla/websocket's default allows it. A sandboxed frame's origin is
// "null", which is never allowed.
func (h *websockets) originAllowed(r *http.Request) bool {
	values := r.Header["Origin"]
	if len(values) == 0 {
		return true
	}
	u, err := url.Parse(values[0])
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) || h.origins[canonicalOrigin(u)]
}

// ParseOrigin checks that s is a web origin, scheme://host[:port] with an
// http or https scheme and nothing after the host, and returns it in the
// form Origin headers are compared in.
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("origin %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("origin %q is not of the form http://host[:port] or https://host[:port]", s)
	}
	return canonicalOrigin(u), nil
}

// canonicalOrigin is u's origin as a browser sends it: lower case, and
// without the scheme's default port.
func canonicalOrigin(u *url.URL) string {
	host := u.Host
	if port := u.Port(); (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return strings.ToLower(u.Scheme + "://" + host)
}

// errorStatus is the HTTP status of a refusal from the CapnpServer before
// an upgrade: 403 for a permission it refused (fs.ErrPermission), 503 for a
// connection it has no room for (rpcguard.ErrLimit), 502 for anything
// else, which is the server's trouble, not the request's.
func errorStatus(err error) int {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return http.StatusForbidden
	case errors.Is(err, rpcguard.ErrLimit):
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway
}

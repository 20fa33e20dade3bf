// Package web is gadgetd's HTTP front door: the health check, the browser
// shell, and Cap'n Proto over websocket.
//
// The websocket endpoints (ws.go) carry one Cap'n Proto message per binary
// websocket message, both ways, and hand each upgraded connection to a
// CapnpServer (*server.Server, wired by cmd/gadgetd), which serves it
// through the same guard as its TCP connections (internal/rpcguard): every
// size, depth, in-flight, export and idle bound, the login deadline and the
// budget of connections that have not logged in apply unchanged.
//
//   - GET /ws bootstraps the Gateway, as a TCP connection does.
//   - GET /ws/frame?ticket=… bootstraps the one gadget session a frame
//     ticket (Gadget.frameTicket) was issued for, logged in as the user it
//     was issued to, and nothing else. A bad, used or expired ticket is an
//     HTTP 403 before the upgrade.
//
// Both refuse a websocket from a page of another origin (403) unless
// WithAllowedOrigins names it; a request with no Origin header is not from a
// browser page and is served.
//
// The shell (shell.go) is the page at GET /: plain HTML, CSS and ES
// modules from web/shell, and the JavaScript client bundles from web/static
// (built from web/js), all embedded in the binary. It shows each gadget's
// UI in a sandboxed iframe whose only channel is a MessagePort the shell
// relays to /ws/frame (web/shell/sandbox.js; web/browsertest proves what
// the frame cannot reach).
//
// The shell shares too (web/shell/sharing.js): it lists who shared each
// gadget and at which role, gives editors and owners a share dialog
// (share with a user, unshare, create, list and revoke links), and redeems
// a link pasted into it or opened as its #redeem=… address.
//
// The listener, its TLS and its connection bounds are the caller's
// (cmd/gadgetd); this package only answers requests.
package web

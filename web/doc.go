// Package web is gadgetd's HTTP front door: the health check, and the page a
// browser sees. The browser shell, and the websocket transport that gives
// it Cap'n Proto through the same guard as TCP (internal/rpcguard), will
// live here too.
//
// The listener, its TLS and its connection bounds are the caller's
// (cmd/gadgetd); this package only answers requests.
package web

// Package wsclient is a Go client's side of gadgetd's Cap'n Proto over
// websocket (package web: /ws and /ws/frame): one Cap'n Proto message per
// binary websocket message, both ways. A Go program uses it to speak to the
// server as the browser shell and its gadget frames do; gadgetd's own
// clients use TCP (package client).
package wsclient

// Package client connects Go programs to a gadgetd server.
//
// Dial opens a Cap'n Proto connection over TCP, or over TLS for an address
// "tls://host:port" (WithTLSConfig to trust a private CA); Login exchanges a
// token for the user's Workspace without waiting for the answer, so calls can
// be pipelined onto it:
//
//	conn, err := client.Dial(ctx, "127.0.0.1:7071")
//	ws, release := conn.Login(ctx, token)
//	defer release()
//	gadget, releaseCreate := ws.Create(ctx, ...)   // sent at once, no round trip yet
//
// A wrong token shows up as the error "invalid token" on the first answer
// read through the workspace.
package client

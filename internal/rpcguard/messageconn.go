package rpcguard

import (
	"io"
	"net"
)

// MessageConn is a connection whose transport delimits messages itself, as
// a websocket does, rather than a byte stream. A Server reads each
// incoming Cap'n Proto message (in the standard stream framing) from a
// transport message of its own, and ends the connection with a protocol
// error when one holds anything else: a part of a message, or more than
// one. It writes each outgoing Cap'n Proto message in a single Write, which
// a MessageConn sends as one transport message. Read is never called.
type MessageConn interface {
	net.Conn
	// NextMessage waits, within the read deadline, for the next incoming
	// transport message, and returns a reader of its payload that reads
	// io.EOF at its end. A message of more than limit bytes fails the
	// read (with an error that wraps ErrLimit), as does one of a kind the
	// transport does not carry Cap'n Proto in (ErrProtocol).
	NextMessage(limit int64) (io.Reader, error)
}

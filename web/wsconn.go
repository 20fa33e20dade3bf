package web

// Design: a wsConn is one upgraded websocket, owned by the rpcguard.Server
// that serves it. The Server's reader goroutine is its only reader
// (NextMessage, or Read) and the Server's codec serializes its writers
// (Write), as gorilla/websocket requires; Close and the control frames
// gorilla answers itself may come from any goroutine.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
)

// closeGrace bounds how long Close waits to tell the peer the socket is
// closing, when the peer is not reading.
const closeGrace = time.Second

// wsConn is a websocket as an rpcguard.MessageConn: each Cap'n Proto
// message travels in one binary websocket message, both ways.
type wsConn struct {
	ws      *websocket.Conn
	reading io.Reader // the message Read is part way through; nil between messages
}

var _ rpcguard.MessageConn = (*wsConn)(nil)

// NextMessage returns the next binary message, of at most limit bytes.
// A text message is a protocol error; the peer closing the socket reads
// as io.EOF, as a TCP peer hanging up does.
func (c *wsConn) NextMessage(limit int64) (io.Reader, error) {
	c.ws.SetReadLimit(limit)
	kind, r, err := c.ws.NextReader()
	if err != nil {
		return nil, c.readError(err, limit)
	}
	if kind != websocket.BinaryMessage {
		return nil, fmt.Errorf("%w: a text websocket message; Cap'n Proto messages travel in binary ones", rpcguard.ErrProtocol)
	}
	return &messageReader{r: r, c: c, limit: limit}, nil
}

// readError says what a failed websocket read means to rpcguard.
func (c *wsConn) readError(err error, limit int64) error {
	switch {
	case errors.Is(err, websocket.ErrReadLimit):
		return fmt.Errorf("%w: a websocket message of more than %d bytes", rpcguard.ErrLimit, limit)
	case websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived):
		return io.EOF
	}
	return err
}

// messageReader reads one message's payload; gorilla checks the read
// limit again as each of the message's frames arrives.
type messageReader struct {
	r     io.Reader
	c     *wsConn
	limit int64
}

func (m *messageReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if err != nil && err != io.EOF {
		err = m.c.readError(err, m.limit)
	}
	return n, err
}

// Read reads the binary messages as one stream, with no bound on their
// size. rpcguard reads a MessageConn's messages with NextMessage instead,
// under its limits; a net.Conn must have Read.
func (c *wsConn) Read(p []byte) (int, error) {
	for {
		if c.reading == nil {
			r, err := c.NextMessage(0) // 0: no limit
			if err != nil {
				return 0, err
			}
			c.reading = r
		}
		n, err := c.reading.Read(p)
		if err == io.EOF {
			c.reading = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

// Write sends p as one binary websocket message, of one frame.
func (c *wsConn) Write(p []byte) (int, error) {
	if err := c.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		if errors.Is(err, websocket.ErrCloseSent) {
			// The peer closed the socket and gorilla answered its close:
			// an ordinary hang-up, as a broken pipe is on TCP.
			return 0, errPeerClosed
		}
		return 0, err
	}
	return len(p), nil
}

// errPeerClosed is a write after the peer closed the socket. Its text ends
// the way rpcguard's ordinary disconnects do, so it is logged at debug, not
// as an error.
var errPeerClosed = errors.New("websocket: the peer hung up; connection closed")

// Close tells the peer the socket is closing, if it will listen within
// closeGrace, and closes it.
func (c *wsConn) Close() error {
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(closeGrace))
	return c.ws.Close()
}

func (c *wsConn) LocalAddr() net.Addr  { return c.ws.LocalAddr() }
func (c *wsConn) RemoteAddr() net.Addr { return c.ws.RemoteAddr() }

func (c *wsConn) SetDeadline(t time.Time) error {
	return errors.Join(c.ws.SetReadDeadline(t), c.ws.SetWriteDeadline(t))
}
func (c *wsConn) SetReadDeadline(t time.Time) error  { return c.ws.SetReadDeadline(t) }
func (c *wsConn) SetWriteDeadline(t time.Time) error { return c.ws.SetWriteDeadline(t) }

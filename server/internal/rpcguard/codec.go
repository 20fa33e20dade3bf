package rpcguard

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"capnproto.org/go/capnp/v3"
)

func newCodec(conn net.Conn, lim Limits) *codec {
	c := &codec{conn: conn, lim: lim}
	c.reader = deadlineReader{conn: conn, messageTimeout: lim.MessageTimeout}
	c.dec = capnp.NewDecoder(&c.reader)
	c.dec.MaxMessageSize = lim.MaxMessageSize
	c.enc = capnp.NewEncoder(conn)
	return c
}

// codec frames messages on conn with size bounds and deadlines. Decode is
// only called from the reader goroutine; Encode may be called from both
// goroutines, so mu serializes writers.
type codec struct {
	conn   net.Conn
	lim    Limits
	reader deadlineReader
	dec    *capnp.Decoder

	mu  sync.Mutex
	enc *capnp.Encoder
}

func (c *codec) Decode() (*capnp.Message, error) {
	if err := c.reader.awaitMessage(c.lim.IdleTimeout); err != nil {
		return nil, err
	}
	msg, err := c.dec.Decode()
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("%w: %v", ErrLimit, err)
		}
		return nil, err
	}
	return msg, nil
}

func (c *codec) Encode(m *capnp.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.conn.SetWriteDeadline(time.Now().Add(c.lim.WriteTimeout)); err != nil {
		return err
	}
	return c.enc.Encode(m)
}

func (c *codec) Close() error { return c.conn.Close() }

// deadlineReader gives the wait for a message's first byte one deadline and
// the rest of the message another.
type deadlineReader struct {
	conn           net.Conn
	messageTimeout time.Duration
	started        bool
}

// awaitMessage arms the idle deadline for the next message.
func (r *deadlineReader) awaitMessage(idle time.Duration) error {
	r.started = false
	return r.conn.SetReadDeadline(time.Now().Add(idle))
}

func (r *deadlineReader) Read(p []byte) (int, error) {
	n, err := r.conn.Read(p)
	if n > 0 && !r.started {
		r.started = true
		if derr := r.conn.SetReadDeadline(time.Now().Add(r.messageTimeout)); derr != nil && err == nil {
			err = derr
		}
	}
	return n, err
}

package wsclient

// Design: a codec is owned by the rpc.Conn it was handed to. go-capnp reads
// it from one goroutine (Decode); Encode may be called from several, so a
// mutex gives gorilla/websocket the single writer it requires. Close may
// come from any goroutine: gorilla allows control frames and Close
// concurrently with the reader and the writer.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"
	"capnproto.org/go/capnp/v3/rpc/transport"
	"github.com/gorilla/websocket"
)

// An Option configures Dial.
type Option func(*config)

type config struct {
	localAddr net.IP
	header    http.Header
}

// WithLocalAddr dials from ip, one of this host's addresses (any of
// 127.0.0.0/8 on loopback), so that many connections can come from
// different addresses, as from different machines.
func WithLocalAddr(ip net.IP) Option { return func(c *config) { c.localAddr = ip } }

// WithHeader sends h with the websocket handshake (an Origin, say). Without
// it the handshake has no Origin: a client that is not a browser page.
func WithHeader(h http.Header) Option { return func(c *config) { c.header = h } }

// A RefusedError is a websocket handshake the server answered with an HTTP
// error instead of upgrading; Reason is the body it sent.
type RefusedError struct {
	URL    string
	Status int
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("websocket %s refused: %d %s: %s", e.URL, e.Status, http.StatusText(e.Status), e.Reason)
}

// Conn is a Cap'n Proto connection over a websocket. Bootstrap on it is
// what the endpoint serves: the Gateway on /ws, a gadget's session on
// /ws/frame.
type Conn struct {
	*rpc.Conn
	log *abortLog
}

// Dial opens a websocket to url (ws:// or wss://) and runs a Cap'n Proto
// connection over it.
func Dial(ctx context.Context, url string, opts ...Option) (*Conn, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	d := *websocket.DefaultDialer
	if cfg.localAddr != nil {
		d.NetDialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: cfg.localAddr}}).DialContext
	}
	ws, resp, err := d.DialContext(ctx, url, cfg.header)
	if err != nil {
		if resp != nil {
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
			return nil, &RefusedError{URL: url, Status: resp.StatusCode, Reason: strings.TrimSpace(string(body))}
		}
		return nil, err
	}
	log := &abortLog{}
	return &Conn{Conn: rpc.NewConn(NewTransport(ws), &rpc.Options{Logger: log}), log: log}, nil
}

// AbortReason is the reason the server gave if it ended the connection
// with an Abort (it refused the connection as full, say), or "". go-capnp
// fails the calls in flight with "connection closed" and only logs the
// reason; this is where it is kept.
func (c *Conn) AbortReason() string {
	if r := c.log.reason.Load(); r != nil {
		return *r
	}
	return ""
}

// abortLog is the rpc.Logger of a Conn: it keeps the first abort reason
// the server sent and drops every other line, as a nil Logger does.
type abortLog struct{ reason atomic.Pointer[string] }

func (l *abortLog) Debug(string, ...any) {}
func (l *abortLog) Info(string, ...any)  {}
func (l *abortLog) Warn(string, ...any)  {}
func (l *abortLog) Error(msg string, _ ...any) {
	if _, reason, ok := strings.Cut(msg, "remote abort: "); ok {
		l.reason.CompareAndSwap(nil, &reason)
	}
}

// NewTransport is a Cap'n Proto transport over ws, which it owns: each
// message is one binary websocket message. Closing it tells the server the
// socket is closing, as a browser does, and closes ws.
func NewTransport(ws *websocket.Conn) transport.Transport {
	return transport.New(&codec{ws: ws})
}

// closeGrace bounds how long Close waits to send its close message.
const closeGrace = time.Second

type codec struct {
	ws *websocket.Conn
	mu sync.Mutex // serializes writers
}

func (c *codec) Encode(m *capnp.Message) error {
	buf, err := m.Marshal()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteMessage(websocket.BinaryMessage, buf)
}

func (c *codec) Decode() (*capnp.Message, error) {
	kind, buf, err := c.ws.ReadMessage()
	if err != nil {
		if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
			return nil, io.EOF
		}
		return nil, err
	}
	if kind != websocket.BinaryMessage {
		return nil, errors.New("the server sent a text websocket message; Cap'n Proto messages travel in binary ones")
	}
	return capnp.Unmarshal(buf)
}

func (c *codec) Close() error {
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(closeGrace))
	return c.ws.Close()
}

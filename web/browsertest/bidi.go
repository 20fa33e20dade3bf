package browsertest

// A WebDriver BiDi client, as small as the Firefox tests need: commands
// (session.new, browsingContext.*, script.*, input.performActions) and one
// event handler (log.entryAdded). Firefox speaks BiDi natively, so no
// geckodriver stands between the tests and the browser.
//
// Goroutines: a bidiConn owns one reader goroutine, started by dialBiDi,
// which is the only one to read the websocket. It hands each reply to the
// command waiting for its id (through a buffered channel, so it never
// blocks) and calls the event handler, on itself, in the order the events
// came. Commands may be sent from any goroutine: writes are serialized by
// writeMu, and pending and err are guarded by mu. close ends the reader and
// waits for it, so that no event is handled after close returns (the
// handler logs to a testing.T, which must not be used after its test).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/gorilla/websocket"
)

// bidiConn is a WebDriver BiDi session's websocket.
type bidiConn struct {
	ws      *websocket.Conn
	onEvent func(method string, params json.RawMessage) // on the reader goroutine

	writeMu sync.Mutex // serializes writes to ws

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan bidiReply
	err     error // why the connection ended; set once

	done chan struct{} // closed when the reader has returned
}

// bidiReply is one message from the browser: a command's reply or an event.
type bidiReply struct {
	Type    string          `json:"type"` // "success", "error" or "event"
	ID      *int64          `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
	Method  string          `json:"method"` // of an event
	Params  json.RawMessage `json:"params"` // of an event
}

// dialBiDi connects to a BiDi endpoint (ws://host:port/session) and starts
// the reader, which calls onEvent for every event.
func dialBiDi(ctx context.Context, url string, onEvent func(method string, params json.RawMessage)) (*bidiConn, error) {
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	c := &bidiConn{ws: ws, onEvent: onEvent, pending: map[int64]chan bidiReply{}, done: make(chan struct{})}
	go c.read()
	return c, nil
}

func (c *bidiConn) read() {
	defer close(c.done)
	for {
		var r bidiReply
		if err := c.ws.ReadJSON(&r); err != nil {
			c.fail(err)
			return
		}
		if r.Type == "event" {
			c.onEvent(r.Method, r.Params)
			continue
		}
		if r.ID == nil { // an error about no command in particular
			c.fail(fmt.Errorf("bidi: %s: %s", r.Error, r.Message))
			return
		}
		c.mu.Lock()
		ch := c.pending[*r.ID]
		delete(c.pending, *r.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
}

// fail ends the connection for every command waiting, and for those to come.
func (c *bidiConn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// call sends a command and decodes its result into result (if not nil).
func (c *bidiConn) call(ctx context.Context, method string, params, result any) error {
	ch := make(chan bidiReply, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return fmt.Errorf("bidi %s: connection ended: %w", method, c.err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()

	c.writeMu.Lock()
	err := c.ws.WriteJSON(map[string]any{"id": id, "method": method, "params": params})
	c.writeMu.Unlock()
	if err != nil {
		c.fail(err)
		return fmt.Errorf("bidi %s: %w", method, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			c.mu.Lock()
			defer c.mu.Unlock()
			return fmt.Errorf("bidi %s: connection ended: %w", method, c.err)
		}
		if r.Type == "error" {
			return fmt.Errorf("bidi %s: %s: %s", method, r.Error, r.Message)
		}
		if result == nil {
			return nil
		}
		return json.Unmarshal(r.Result, result)
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("bidi %s: %w", method, ctx.Err())
	}
}

// close closes the websocket and waits for the reader to return.
func (c *bidiConn) close() {
	c.fail(errors.New("closed"))
	c.ws.Close()
	<-c.done
}

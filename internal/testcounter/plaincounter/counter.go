package plaincounter

import (
	"context"
	"slices"
	"sync"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
)

// Counter is an in-memory counterpb.Counter. Gate, when non-nil, is received
// from before each increment completes, so tests can hold calls in flight.
type Counter struct {
	Gate <-chan struct{}

	mu        sync.Mutex
	value     int64
	listeners []counterpb.Listener
}

// Client exports c as a capability.
func (c *Counter) Client() counterpb.Counter {
	return counterpb.Counter(capserver.New(counterpb.Counter_Methods(nil, c), c, c))
}

// Shutdown releases the listeners once no client holds the counter.
func (c *Counter) Shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.listeners {
		l.Release()
	}
	c.listeners = nil
}

func (c *Counter) Increment(ctx context.Context, call counterpb.Counter_increment) error {
	if c.Gate != nil {
		call.Go() // let other calls queue up behind this one's answer, not its handler
		select {
		case <-c.Gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	by := call.Args().By()
	if by == 0 {
		by = 1
	}
	c.mu.Lock()
	c.value += by
	v := c.value
	listeners := make([]counterpb.Listener, len(c.listeners))
	for i, l := range c.listeners {
		listeners[i] = l.AddRef()
	}
	c.mu.Unlock()
	for _, l := range listeners {
		f, release := l.Changed(ctx, func(p counterpb.Listener_changed_Params) error { p.SetValue(v); return nil })
		if res, err := f.Struct(); err == nil && res.HasNext() {
			// A follow-up subscription, as the gadget's counter keeps one.
			c.mu.Lock()
			c.listeners = append(c.listeners, res.Next().AddRef())
			c.mu.Unlock()
		}
		release()
		l.Release()
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetValue(v)
	return nil
}

func (c *Counter) Get(ctx context.Context, call counterpb.Counter_get) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	c.mu.Lock()
	res.SetValue(c.value)
	c.mu.Unlock()
	return nil
}

func (c *Counter) Watch(ctx context.Context, call counterpb.Counter_watch) error {
	l := call.Args().Listener()
	if !capnp.Client(l).IsValid() {
		return nil
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	c.mu.Lock()
	res.SetValue(c.value)
	c.mu.Unlock()
	return res.SetHandle(c.subscribe(l))
}

// subscribe adds l to the listeners and returns its subscription's handle.
func (c *Counter) subscribe(l counterpb.Listener) counterpb.Handle {
	h := &handle{c: c, listener: l.AddRef()}
	c.mu.Lock()
	c.listeners = append(c.listeners, h.listener)
	c.mu.Unlock()
	return counterpb.Handle_ServerToClient(h)
}

// Keep and Kept are the gadget's slot, which the plain counter does not
// have: nothing outside gadgetd bounces capabilities through it.
func (c *Counter) Keep(context.Context, counterpb.Counter_keep) error {
	return capnp.Unimplemented("plaincounter keeps no capability")
}

func (c *Counter) Kept(context.Context, counterpb.Counter_kept) error {
	return capnp.Unimplemented("plaincounter keeps no capability")
}

// Present has no answer outside gadgetd: there are no sessions here.
func (c *Counter) Present(context.Context, counterpb.Counter_present) error {
	return capnp.Unimplemented("plaincounter runs outside gadgetd: it has no sessions")
}

// handle is a watch's subscription; dropping it unsubscribes.
type handle struct {
	c        *Counter
	listener counterpb.Listener
}

func (h *handle) Get(ctx context.Context, call counterpb.Handle_get) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	h.c.mu.Lock()
	res.SetValue(h.c.value)
	h.c.mu.Unlock()
	return nil
}

func (h *handle) Watch(ctx context.Context, call counterpb.Handle_watch) error {
	l := call.Args().Listener()
	if !capnp.Client(l).IsValid() {
		return nil
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetHandle(h.c.subscribe(l))
}

func (h *handle) Shutdown() {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	for i, l := range h.c.listeners {
		if l == h.listener {
			h.c.listeners = slices.Delete(h.c.listeners, i, i+1)
			l.Release()
			return
		}
	}
}

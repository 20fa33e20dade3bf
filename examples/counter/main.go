// Command counter is the smallest useful gadget: a counter shared by everyone
// who opens it, kept in the gadget's storage, with listeners that hear about
// every change while their subscriber holds the handle watch returned. It shows the three things every gadget does: serve its own
// schema (counterpb.Counter), keep durable state in Host.storage, and call
// back capabilities that clients hand it.
//
// Build it with `gadgetd blueprint build examples/counter`.
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
	"github.com/gadgetd/gadgetd/guest"
	"github.com/gadgetd/gadgetd/schema"
)

func init() { guest.Serve(app{}) }

func main() {}

// app is the gadget's main object: it opens sessions.
type app struct{}

func (app) Open(ctx context.Context, call schema.Guest_open) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetSession(capnp.Client(counterpb.Counter_ServerToClient(&shared)))
}

// shared is the one counter every session talks to. Its subscriptions live
// as long as this instance; the value lives in storage.
var shared counter

type counter struct {
	subs []*subscription
}

// subscription is one watch: its listener, until the subscriber drops the
// handle or the listener fails.
type subscription struct {
	c        *counter
	listener counterpb.Listener
	ended    bool
}

// Shutdown runs when the subscriber's handle is dropped: unsubscribe.
func (s *subscription) Shutdown() { s.c.unsubscribe(s) }

const valueKey = "value"

func (c *counter) Increment(ctx context.Context, call counterpb.Counter_increment) error {
	// Listeners may call back into this counter (get, watch) while notify
	// waits on them. The SDK runs each call on the goroutine that delivers
	// it, not on go-capnp's per-object queue, so those calls reach the
	// counter at once, without call.Go (guest/doc.go, "Concurrency").
	by := call.Args().By()
	if by == 0 {
		by = 1
	}
	v, err := load(ctx)
	if err != nil {
		return err
	}
	v += by
	if err := store(ctx, v); err != nil {
		return err
	}
	c.notify(ctx, v)
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetValue(v)
	return nil
}

func (c *counter) Get(ctx context.Context, call counterpb.Counter_get) error {
	v, err := load(ctx)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetValue(v)
	return nil
}

func (c *counter) Watch(ctx context.Context, call counterpb.Counter_watch) error {
	l := call.Args().Listener()
	if !l.IsValid() {
		return fmt.Errorf("watch: listener is null")
	}
	v, err := load(ctx)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	// Arguments are released when the method returns: keep our own reference.
	s := &subscription{c: c, listener: l.AddRef()}
	c.subs = append(c.subs, s)
	res.SetValue(v)
	return res.SetHandle(counterpb.Handle_ServerToClient(s))
}

// notify tells every subscriber about v and drops those whose listener
// fails. Listeners may watch or unsubscribe while it waits on them, so it
// walks a copy.
func (c *counter) notify(ctx context.Context, v int64) {
	for _, s := range slices.Clone(c.subs) {
		if s.ended {
			continue
		}
		_, release, err := s.listener.ChangedSync(ctx, func(p counterpb.Listener_changed_Params) error {
			p.SetValue(v)
			return nil
		})
		release()
		if err != nil {
			_, release, _ := guest.Host().LogSync(ctx, func(p schema.Host_log_Params) error {
				p.SetLevel(schema.LogLevel_warn)
				return p.SetText("dropping a listener that failed: " + err.Error())
			})
			release()
			c.unsubscribe(s)
		}
	}
}

// unsubscribe ends s and releases its listener, which tells the
// subscriber the subscription ended.
func (c *counter) unsubscribe(s *subscription) {
	if s.ended {
		return
	}
	s.ended = true
	c.subs = slices.DeleteFunc(c.subs, func(o *subscription) bool { return o == s })
	s.listener.Release()
}

func load(ctx context.Context) (int64, error) {
	res, release, err := guest.Storage(ctx).GetSync(ctx, func(p schema.Storage_get_Params) error {
		return p.SetKey(valueKey)
	})
	defer release()
	if err != nil {
		return 0, fmt.Errorf("reading the counter: %w", err)
	}
	if !res.Found() {
		return 0, nil
	}
	b, err := res.Value()
	if err != nil || len(b) != 8 {
		return 0, fmt.Errorf("reading the counter: stored value is corrupt")
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

func store(ctx context.Context, v int64) error {
	_, release, err := guest.Storage(ctx).PutSync(ctx, func(p schema.Storage_put_Params) error {
		if err := p.SetKey(valueKey); err != nil {
			return err
		}
		return p.SetValue(binary.BigEndian.AppendUint64(nil, uint64(v)))
	})
	release()
	return err
}

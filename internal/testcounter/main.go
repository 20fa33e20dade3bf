// Command testcounter is the kernel's test counter: the counter example's
// guest, copied with a schema of its own (internal/testcounter/counterpb), so
// the server and wasmhost tests stand on a fixture that does not change when
// the example does. A counter shared by everyone who opens it, kept in the
// gadget's storage, with listeners that hear about every change while their
// subscriber holds the watch handle; a listener whose call fails is logged
// at warn and dropped. Each session keeps its SessionContext, which present
// asks who is here; keep and kept share one slot for a capability.
//
// Tests build it with internal/blueprint/blueprinttest (the blueprint) or
// internal/wasmbuild (the guest module alone).
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/guest"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
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
	// Arguments are released when the method returns: keep our own
	// reference. A bare host (wasmhost's tests) may lend no context.
	s := &session{counter: &shared, context: call.Args().Context().AddRef()}
	sessions[s] = struct{}{}
	return res.SetSession(capnp.Client(counterpb.Counter_ServerToClient(s)))
}

// sessions are the sessions open on this instance.
var sessions = map[*session]struct{}{}

// session is one user's session: the shared counter, and the platform's
// context for this session.
type session struct {
	*counter
	context schema.SessionContext
}

// Shutdown runs when the host drops the session: its client let go of it.
func (s *session) Shutdown() {
	delete(sessions, s)
	s.context.Release()
}

func (s *session) Present(ctx context.Context, call counterpb.Counter_present) error {
	var names []string
	for other := range sessions {
		if !other.context.IsValid() {
			continue
		}
		res, release, err := other.context.CallerSync(ctx, nil)
		if err == nil {
			var caller schema.Caller
			if caller, err = res.Caller(); err == nil {
				var name string
				if name, err = caller.UserName(); err == nil {
					names = append(names, name)
				}
			}
		}
		release()
		if err != nil && !capnp.IsDisconnected(err) {
			return err
		}
	}
	slices.Sort(names)
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewUserNames(int32(len(names)))
	if err != nil {
		return err
	}
	for i, n := range names {
		if err := list.Set(i, n); err != nil {
			return err
		}
	}
	return nil
}

// slot is what keep last kept, for every session of this instance.
var slot capnp.Client

func (s *session) Keep(ctx context.Context, call counterpb.Counter_keep) error {
	slot.Release()
	slot = call.Args().Thing().AddRef()
	return nil
}

func (s *session) Kept(ctx context.Context, call counterpb.Counter_kept) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetThing(slot.AddRef())
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

func (s *subscription) Get(ctx context.Context, call counterpb.Handle_get) error {
	return answerValue(ctx, call.AllocResults)
}

func (s *subscription) Watch(ctx context.Context, call counterpb.Handle_watch) error {
	handle, err := s.c.subscribe(ctx, call.Args().Listener())
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetHandle(handle)
}

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
	return answerValue(ctx, call.AllocResults)
}

// answerValue answers a call for the counter's value with results from
// alloc.
func answerValue[R interface{ SetValue(int64) }](ctx context.Context, alloc func() (R, error)) error {
	v, err := load(ctx)
	if err != nil {
		return err
	}
	res, err := alloc()
	if err != nil {
		return err
	}
	res.SetValue(v)
	return nil
}

func (c *counter) Watch(ctx context.Context, call counterpb.Counter_watch) error {
	v, err := load(ctx)
	if err != nil {
		return err
	}
	handle, err := c.subscribe(ctx, call.Args().Listener())
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetValue(v)
	return res.SetHandle(handle)
}

// subscribe adds a subscription for l and returns its handle.
func (c *counter) subscribe(ctx context.Context, l counterpb.Listener) (counterpb.Handle, error) {
	if !l.IsValid() {
		return counterpb.Handle{}, fmt.Errorf("watch: listener is null")
	}
	// Arguments are released when the method returns: keep our own reference.
	s := &subscription{c: c, listener: l.AddRef()}
	c.subs = append(c.subs, s)
	return counterpb.Handle_ServerToClient(s), nil
}

// notify tells every subscriber about v and drops those whose listener
// fails. Listeners may watch or unsubscribe while it waits on them, so it
// walks a copy.
func (c *counter) notify(ctx context.Context, v int64) {
	for _, s := range slices.Clone(c.subs) {
		if s.ended {
			continue
		}
		res, release, err := s.listener.ChangedSync(ctx, func(p counterpb.Listener_changed_Params) error {
			p.SetValue(v)
			return nil
		})
		if err == nil && res.HasNext() {
			// A follow-up subscription, with no handle: it lasts until a
			// call to it fails.
			c.subs = append(c.subs, &subscription{c: c, listener: res.Next().AddRef()})
		}
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

package membrane_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/leakcheck"
	"github.com/gadgetd/gadgetd/internal/membrane"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
)

// TestMain fails the run if the tests leak capabilities or goroutines.
func TestMain(m *testing.M) { leakcheck.Main(m) }

// The tests put a plain counter inside a membrane and a client's listeners
// outside it, and revoke the client's access by making the check fail.

var errRevoked = capnp.Disconnected("access revoked")

// access is a check that passes until revoke.
type access struct{ revoked atomic.Bool }

func (a *access) check(context.Context) error {
	if a.revoked.Load() {
		return errRevoked
	}
	return nil
}

func (a *access) revoke() { a.revoked.Store(true) }

// ear is a client's listener: it records what it hears, hands the gadget
// next from its first call, and reports its release.
type ear struct {
	mu       sync.Mutex
	heard    []int64
	next     counterpb.Listener
	released chan struct{}
}

func newEar(t *testing.T) (*ear, counterpb.Listener) {
	e := &ear{released: make(chan struct{})}
	return e, counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, e), e, e))
}

func (e *ear) Changed(ctx context.Context, call counterpb.Listener_changed) error {
	e.mu.Lock()
	e.heard = append(e.heard, call.Args().Value())
	next := e.next
	e.next = counterpb.Listener{}
	e.mu.Unlock()
	if !next.IsValid() {
		return nil
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetNext(next)
}

func (e *ear) Shutdown() { close(e.released) }

func (e *ear) heardSoFar() []int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.heard)
}

func (e *ear) requireReleased(t *testing.T, name string) {
	t.Helper()
	select {
	case <-e.released:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was not released when the membrane closed", name)
	}
}

// watch subscribes l to c and returns the subscription's handle.
func watch(t *testing.T, c counterpb.Counter, l counterpb.Listener) counterpb.Handle {
	t.Helper()
	f, release := c.Watch(context.Background(), func(p counterpb.Counter_watch_Params) error { return p.SetListener(l) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	return res.Handle().AddRef()
}

func handleGet(h counterpb.Handle) (int64, error) {
	f, release := h.Get(context.Background(), nil)
	defer release()
	res, err := f.Struct()
	return res.Value(), err
}

func requireRevoked(t *testing.T, what string, err error) {
	t.Helper()
	if !capnp.IsDisconnected(err) || !strings.Contains(err.Error(), "access revoked") {
		t.Fatalf("%s after the revocation: err = %v, want the check's disconnected error", what, err)
	}
}

// gadget is a plain counter inside a membrane: inside is the gadget's own
// reference, outside the client's, through m.
type gadget struct {
	access  *access
	m       *membrane.Membrane
	inside  counterpb.Counter
	outside counterpb.Counter
}

func newGadget(t *testing.T, cfg membrane.Config) *gadget {
	return newHeldGadget(t, cfg, nil)
}

// newHeldGadget is newGadget with a counter whose watch waits for hold to
// close (nil: it does not wait).
func newHeldGadget(t *testing.T, cfg membrane.Config, hold chan struct{}) *gadget {
	g := &gadget{access: &access{}}
	if cfg.Check == nil {
		cfg.Check = g.access.check
	}
	g.m = membrane.New(cfg)
	c := &heldWatch{Counter: &plaincounter.Counter{}, hold: hold}
	g.inside = counterpb.Counter(capserver.New(counterpb.Counter_Methods(nil, c), c, c.Counter))
	g.outside = counterpb.Counter(g.m.Out(capnp.Client(g.inside.AddRef())))
	t.Cleanup(func() {
		g.outside.Release()
		g.inside.Release()
	})
	return g
}

// overConnection returns the client's counter as a peer of a connection
// sees it, with g.outside as the connection's bootstrap: calls on it
// arrive as received calls (Recv), pipelined ones included.
func (g *gadget) overConnection(t *testing.T) counterpb.Counter {
	left, right := net.Pipe()
	server := rpc.NewConn(rpc.NewStreamTransport(left), &rpc.Options{BootstrapClient: capnp.Client(g.outside.AddRef())})
	conn := rpc.NewConn(rpc.NewStreamTransport(right), nil)
	remote := counterpb.Counter(conn.Bootstrap(context.Background()))
	t.Cleanup(func() {
		remote.Release()
		conn.Close()
		server.Close()
	})
	return remote
}

// heldWatch is a plain counter whose watch waits for hold to close, so
// calls can be pipelined on its answer before it resolves.
type heldWatch struct {
	*plaincounter.Counter
	hold chan struct{}
}

func (c *heldWatch) Watch(ctx context.Context, call counterpb.Counter_watch) error {
	if c.hold != nil {
		call.Go()
		<-c.hold
	}
	return c.Counter.Watch(ctx, call)
}

// TestEverythingACallCarriesAcrossIsCutOffWithIt: a listener passed in, a
// second one it returned to the gadget, the handle the gadget handed out
// and a listener passed in through that handle all work until the check
// fails; then every call on them fails, the gadget's calls to the
// listeners reach nobody, and the membrane releases all of them.
func TestEverythingACallCarriesAcrossIsCutOffWithIt(t *testing.T) {
	ctx := context.Background()
	g := newGadget(t, membrane.Config{})
	first, firstCap := newEar(t)
	followUp, followUpCap := newEar(t)
	first.next = followUpCap
	handle := watch(t, g.outside, firstCap)
	defer handle.Release()
	viaHandle, viaHandleCap := newEar(t)
	f, release := handle.Watch(ctx, func(p counterpb.Handle_watch_Params) error { return p.SetListener(viaHandleCap) })
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("watch through the handle: %v", err)
	}
	second := res.Handle().AddRef()
	release()
	defer second.Release()

	for range 2 { // the first increment hands the gadget the follow-up
		if _, err := countertest.Increment(ctx, g.outside); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := handleGet(handle); err != nil || v != 2 {
		t.Fatalf("get through the handle before the revocation = %d, %v; want 2", v, err)
	}
	if got := first.heardSoFar(); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("the first listener heard %v, want [1 2]", got)
	}
	if got := followUp.heardSoFar(); !slices.Equal(got, []int64{2}) {
		t.Fatalf("the follow-up heard %v, want [2]", got)
	}
	if got := viaHandle.heardSoFar(); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("the listener passed through the handle heard %v, want [1 2]", got)
	}

	g.access.revoke()
	if _, err := countertest.Increment(ctx, g.outside); err == nil {
		t.Fatal("an increment through the membrane succeeded after the revocation")
	}
	_, err = handleGet(handle)
	requireRevoked(t, "get through the handle", err)
	// The gadget itself goes on: its own increment reaches no one outside.
	if v, err := countertest.Increment(ctx, g.inside); err != nil || v != 3 {
		t.Fatalf("the gadget's own increment = %d, %v; want 3", v, err)
	}
	for name, e := range map[string]*ear{"the first listener": first, "the follow-up": followUp, "the listener passed through the handle": viaHandle} {
		e.requireReleased(t, name)
		if got := e.heardSoFar(); slices.Contains(got, 3) {
			t.Fatalf("%s heard %v after the revocation", name, got)
		}
	}
	if err := g.m.Err(); err != errRevoked {
		t.Fatalf("the membrane's Err = %v, want the check's error", err)
	}
}

// TestAWrapperCrossingBackIsItsTargetAgain: a capability that went out and
// comes back in is the inside's own object again, one that came in and
// goes back out is the outside's, and the inside's own objects (Inside)
// come in as themselves.
func TestAWrapperCrossingBackIsItsTargetAgain(t *testing.T) {
	insideObj := capnp.Client((&plaincounter.Counter{}).Client())
	defer insideObj.Release()
	own := capnp.Client((&plaincounter.Counter{}).Client())
	defer own.Release()
	m := membrane.New(membrane.Config{
		Check:  func(context.Context) error { return nil },
		Inside: func(c capnp.Client) bool { return c.IsSame(own) },
	})
	_, outsideCap := newEar(t)
	outsideObj := capnp.Client(outsideCap)
	defer outsideObj.Release()

	out := m.Out(insideObj.AddRef())
	if out.IsSame(insideObj) {
		t.Fatal("an inside object went out unwrapped")
	}
	back := m.In(out)
	if !back.IsSame(insideObj) {
		t.Fatalf("the inside object came back as %v, not itself", back)
	}
	back.Release()

	in := m.In(outsideObj.AddRef())
	if in.IsSame(outsideObj) {
		t.Fatal("an outside object came in unwrapped")
	}
	again := m.Out(in)
	if !again.IsSame(outsideObj) {
		t.Fatalf("the outside object went back out as %v, not itself", again)
	}
	again.Release()

	ownIn := m.In(own.AddRef())
	if !ownIn.IsSame(own) {
		t.Fatal("the inside's own object came in wrapped")
	}
	ownIn.Release()
}

// TestACheckThatFailsForNowFailsOnlyThatCall: an error that is not
// disconnected fails the call and leaves the membrane open.
func TestACheckThatFailsForNowFailsOnlyThatCall(t *testing.T) {
	ctx := context.Background()
	busy := errors.New("the store is busy")
	var failOnce atomic.Bool
	failOnce.Store(true)
	g := newGadget(t, membrane.Config{Check: func(context.Context) error {
		if failOnce.Swap(false) {
			return busy
		}
		return nil
	}})
	if _, err := countertest.Increment(ctx, g.outside); err == nil || !strings.Contains(err.Error(), busy.Error()) {
		t.Fatalf("increment while the check fails = %v, want %v", err, busy)
	}
	if v, err := countertest.Increment(ctx, g.outside); err != nil || v != 1 {
		t.Fatalf("the next increment = %d, %v; want 1", v, err)
	}
	if err := g.m.Err(); err != nil {
		t.Fatalf("the membrane closed on a passing failure: %v", err)
	}
}

// TestRefusedHearsEveryCallRefusedForGood: Refused runs for the call whose
// check closed the membrane and for each call after.
func TestRefusedHearsEveryCallRefusedForGood(t *testing.T) {
	ctx := context.Background()
	var refused atomic.Int32
	g := newGadget(t, membrane.Config{Refused: func(err error) {
		if capnp.IsDisconnected(err) {
			refused.Add(1)
		}
	}})
	if _, err := countertest.Increment(ctx, g.outside); err != nil {
		t.Fatal(err)
	}
	g.access.revoke()
	for range 2 {
		if _, err := countertest.Increment(ctx, g.outside); err == nil {
			t.Fatal("an increment succeeded after the revocation")
		}
	}
	if n := refused.Load(); n != 2 {
		t.Fatalf("Refused ran %d times, want 2", n)
	}
}

// TestOverAConnectionPipelinedCallsAndResultsCrossToo: with the membrane's
// wrapper as a connection's bootstrap, calls arrive as received calls
// (Recv); a call pipelined on watch's handle, a listener returned in
// results and one passed through the handle all cross the membrane and
// are cut off with it.
func TestOverAConnectionPipelinedCallsAndResultsCrossToo(t *testing.T) {
	ctx := context.Background()
	g := newGadget(t, membrane.Config{})
	remote := g.overConnection(t)

	first, firstCap := newEar(t)
	followUp, followUpCap := newEar(t)
	first.next = followUpCap
	wf, releaseWatch := remote.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(firstCap) })
	handle := wf.Handle()
	viaHandle, viaHandleCap := newEar(t)
	gf, releaseGet := handle.Get(ctx, nil) // pipelined on the unresolved handle
	hf, releaseHandleWatch := handle.Watch(ctx, func(p counterpb.Handle_watch_Params) error { return p.SetListener(viaHandleCap) })
	if res, err := gf.Struct(); err != nil || res.Value() != 0 {
		t.Fatalf("pipelined get = %v, %v", res.Value(), err)
	}
	releaseGet()
	if _, err := hf.Struct(); err != nil {
		t.Fatalf("pipelined watch through the handle: %v", err)
	}
	for range 2 {
		if _, err := countertest.Increment(ctx, remote); err != nil {
			t.Fatal(err)
		}
	}
	if got := followUp.heardSoFar(); !slices.Equal(got, []int64{2}) {
		t.Fatalf("the follow-up heard %v, want [2]", got)
	}
	if got := viaHandle.heardSoFar(); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("the listener passed through the handle heard %v, want [1 2]", got)
	}

	g.access.revoke()
	gf2, releaseGet2 := handle.Get(ctx, nil)
	_, err := gf2.Struct()
	releaseGet2()
	requireRevoked(t, "get through the handle", err)
	if _, err := countertest.Increment(ctx, g.inside); err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]*ear{"the first listener": first, "the follow-up": followUp, "the listener passed through the handle": viaHandle} {
		e.requireReleased(t, name)
		if got := e.heardSoFar(); slices.Contains(got, 3) {
			t.Fatalf("%s heard %v after the revocation", name, got)
		}
	}
	releaseHandleWatch()
	releaseWatch()
}

// TestCallsPipelinedOnAnUnfinishedCallCrossToo: calls pipelined on watch's
// handle while watch is still running, made in this process and over a
// connection, reach the handle through the membrane: the listener one of
// them passes goes in wrapped, and is cut off and released with the rest.
func TestCallsPipelinedOnAnUnfinishedCallCrossToo(t *testing.T) {
	for _, way := range []string{"in this process", "over a connection"} {
		t.Run(way, func(t *testing.T) {
			ctx := context.Background()
			hold := make(chan struct{})
			g := newHeldGadget(t, membrane.Config{}, hold)
			counter := g.outside
			if way == "over a connection" {
				counter = g.overConnection(t)
			}
			first, firstCap := newEar(t)
			wf, releaseWatch := counter.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(firstCap) })
			defer releaseWatch()
			piped, pipedCap := newEar(t)
			hf, releaseHandleWatch := wf.Handle().Watch(ctx, func(p counterpb.Handle_watch_Params) error { return p.SetListener(pipedCap) })
			defer releaseHandleWatch()
			time.Sleep(10 * time.Millisecond) // let the pipelined call reach the unfinished watch
			close(hold)
			if _, err := hf.Struct(); err != nil {
				t.Fatalf("watch pipelined on the handle: %v", err)
			}
			if _, err := countertest.Increment(ctx, counter); err != nil {
				t.Fatal(err)
			}
			if got := piped.heardSoFar(); !slices.Equal(got, []int64{1}) {
				t.Fatalf("the listener passed in the pipelined call heard %v, want [1]", got)
			}

			g.access.revoke()
			if _, err := countertest.Increment(ctx, g.inside); err != nil {
				t.Fatal(err)
			}
			for name, e := range map[string]*ear{"the first listener": first, "the listener passed in the pipelined call": piped} {
				e.requireReleased(t, name)
				if got := e.heardSoFar(); slices.Contains(got, 2) {
					t.Fatalf("%s heard %v after the revocation", name, got)
				}
			}
		})
	}
}

// TestACapabilityBouncedBetweenTwoMembranesIsRefusedPastMaxDepth: passing
// an outside capability in through one membrane and out through another
// with the same inside, again and again (two sessions of one gadget), adds
// a wrapper at each crossing; past MaxDepth the crossing gives ErrTooDeep,
// so no capability is inside more wrappers than that. (An outside tester
// made one call cost 1.5 s and the server 1.2 GB with 80,000 rounds.)
func TestACapabilityBouncedBetweenTwoMembranesIsRefusedPastMaxDepth(t *testing.T) {
	ctx := context.Background()
	open := membrane.Config{Check: func(context.Context) error { return nil }}
	m1, m2 := membrane.New(open), membrane.New(open)
	e, x := newEar(t)
	c := capnp.Client(x)
	refusedAt := 0
	for round := 1; round <= 2*membrane.MaxDepth && refusedAt == 0; round++ {
		c = m2.Out(m1.In(c))
		f, release := counterpb.Listener(c).Changed(ctx, func(p counterpb.Listener_changed_Params) error {
			p.SetValue(int64(round))
			return nil
		})
		_, err := f.Struct()
		release()
		switch {
		case err != nil && strings.Contains(err.Error(), fmt.Sprintf("more than %d wrappers", membrane.MaxDepth)):
			refusedAt = round
		case err != nil:
			t.Fatalf("round %d: %v", round, err)
		}
	}
	c.Release()
	if refusedAt == 0 || refusedAt > membrane.MaxDepth/2+1 {
		t.Fatalf("refused at round %d, want within %d rounds (two wrappers a round)", refusedAt, membrane.MaxDepth/2+1)
	}
	if heard := e.heardSoFar(); len(heard) != refusedAt-1 {
		t.Fatalf("the listener heard %v, want every round before the refusal", heard)
	}
}

// TestTheInsidesOwnObjectComesBackAsItselfThroughAnotherMembrane: an
// object one session handed out, passed into another session of the same
// gadget, arrives as the gadget's own object.
func TestTheInsidesOwnObjectComesBackAsItselfThroughAnotherMembrane(t *testing.T) {
	own := capnp.Client((&plaincounter.Counter{}).Client())
	defer own.Release()
	cfg := membrane.Config{
		Check:  func(context.Context) error { return nil },
		Inside: func(c capnp.Client) bool { return c.IsSame(own) },
	}
	m1, m2 := membrane.New(cfg), membrane.New(cfg)
	handedOut := m1.Out(own.AddRef())
	back := m2.In(handedOut)
	defer back.Release()
	if !back.IsSame(own) {
		t.Fatalf("the object came in through the other membrane as %v, not itself", back)
	}
}

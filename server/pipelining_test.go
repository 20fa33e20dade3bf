package server_test

import (
	"io"
	"net"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// These tests pipeline calls onto answers that have not returned and whose
// targets turn out unable to take them. go-capnp v3.1.0-alpha.2 kills the
// process on such paths (a nil PipelineCaller in AnswerQueue.Fulfill), so
// each one crashed the test binary before the transport started holding
// pipelined calls until their answer is sent. Surviving, and serving the
// next client, is the property.

// A flood of open().session.increment() onto one gadget overflows its queue:
// Guest.open fails at once, and every call pipelined behind it must fail
// cleanly rather than kill the server.
func TestAFloodOfPipelinedCallsOntoAnOverloadedGadgetDoesNotCrashTheServer(t *testing.T) {
	h := start(t, t.TempDir(), server.WithWasmOptions(wasmhost.WithQueueLimit(2)))
	token := h.token("alice")
	ctx := testCtx(t)
	g, _ := create(t, h.login(t, token), "counter")

	const calls = 300
	type pending struct {
		f       counterpb.Counter_increment_Results_Future
		release capnp.ReleaseFunc
	}
	var all []pending
	for range calls {
		of, releaseOpen := g.Open(ctx, nil)
		f, release := counterpb.Counter(of.Session()).Increment(ctx, func(p counterpb.Counter_increment_Params) error {
			p.SetBy(1)
			return nil
		})
		all = append(all, pending{f, func() { release(); releaseOpen() }})
	}
	var served, refused int
	for _, p := range all {
		if _, err := p.f.Struct(); err != nil {
			refused++
		} else {
			served++
		}
		p.release()
	}
	t.Logf("%d increments served, %d refused", served, refused)
	if refused == 0 {
		t.Errorf("no call was refused: the flood did not overload the gadget, so this test proves nothing")
	}
	h.requireServing(t, token)

	gf, release := session(t, g).Get(ctx, nil)
	defer release()
	res, err := gf.Struct()
	if err != nil {
		t.Fatalf("the gadget does not serve after the flood: %v", err)
	}
	if res.Value() != int64(served) {
		t.Errorf("counter = %d after %d served increments", res.Value(), served)
	}
}

// poisonedBundle is the hostile test guest (its sessions speak Storage)
// shipped with a schema that reuses the node ids of gadgetd's Storage and
// Gateway and declares a capability where they have data and vice versa.
func poisonedBundle(t testing.TB) blueprint.Bundle {
	b := hostileBundle(t)
	b.Manifest.Name = "poisoned"
	b.SchemaNodes = blueprinttest.Schema(t, "server/testdata", "poisoned.capnp")
	return b
}

// A guest answers, after a delay, with data where its blueprint's schema
// declares a capability, while a client has pipelined a call onto that
// field. The pipelined call fails; the server lives.
func TestACallPipelinedOntoDataAGuestReturnsWhereItsSchemaPromisedACapabilityFailsCleanly(t *testing.T) {
	h := start(t, t.TempDir())
	token := h.token("mallory")
	ctx := testCtx(t)
	ws := h.login(t, token)
	if err := install(t, ws, poisonedBundle(t)); err != nil {
		t.Fatal(err)
	}
	g, _ := create(t, ws, "poisoned")
	s := openHostile(t, g)

	f, release := s.Get(ctx, func(p schema.Storage_get_Params) error { return p.SetKey("sleep:300") })
	defer release()
	err := callMethod(ctx, f.Field(0, nil).Client(), schema.Storage_TypeID, 0)
	if err == nil {
		t.Errorf("a call on the data the guest returned succeeded")
	}
	t.Logf("pipelined call: %v", err)
	if _, err := f.Struct(); err != nil {
		t.Errorf("the guest's own answer failed: %v", err)
	}
	h.requireServing(t, token)
}

// A blueprint's schema cannot change how the server treats anyone else's
// calls: after it is installed and run, another user's pipelined
// login(t).workspace.gadgets() works, and so does a pipelined call onto a
// real Storage.get's data field (refused, not crashed).
func TestABlueprintReusingTheServersSchemaIDsChangesNothingForOthers(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	mallory := h.login(t, h.token("mallory"))
	if err := install(t, mallory, poisonedBundle(t)); err != nil {
		t.Fatal(err)
	}
	g, _ := create(t, mallory, "poisoned")
	if _, err := command(ctx, openHostile(t, g), "ok"); err != nil {
		t.Fatal(err)
	}

	alice := h.token("alice")
	gw := dial(t, h.addr).Gateway()
	lf, release := gw.Login(ctx, func(p schema.Gateway_login_Params) error { return p.SetToken(alice) })
	defer release()
	gf, release2 := lf.Workspace().Gadgets(ctx, nil)
	defer release2()
	if _, err := gf.Struct(); err != nil {
		t.Fatalf("pipelined login(t).workspace.gadgets() after the poisoned install: %v", err)
	}

	// A real Storage answers get with data; a call pipelined onto it is
	// refused by go-capnp, whatever the poisoned schema claims.
	hostile := h.login(t, alice)
	if err := install(t, hostile, hostileBundle(t)); err != nil {
		t.Fatal(err)
	}
	hg, _ := create(t, hostile, "hostile")
	vf, release3 := openHostile(t, hg).Get(ctx, func(p schema.Storage_get_Params) error { return p.SetKey("sleep:300") })
	defer release3()
	if err := callMethod(ctx, vf.Field(0, nil).Client(), schema.Storage_TypeID, 0); err == nil {
		t.Errorf("a call on Storage.get's data succeeded")
	}
	h.requireServing(t, alice)
}

// mutedProxy forwards a client's connection to upstream, but forwards
// nothing the server says until the client has sent wantCalls calls: a
// client that needs a round trip per step of a chain stalls behind it.
type mutedProxy struct {
	addr     string
	unmuted  chan struct{} // closed once the client sent wantCalls calls
	gaveUp   chan struct{} // closed if it did not within the wait
	upstream string
}

func newMutedProxy(t *testing.T, upstream string, wantCalls int, wait time.Duration) *mutedProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &mutedProxy{addr: ln.Addr().String(), unmuted: make(chan struct{}), gaveUp: make(chan struct{}), upstream: upstream}
	go func() {
		down, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", upstream)
		if err != nil {
			down.Close()
			return
		}
		t.Cleanup(func() { down.Close(); up.Close() })
		// Client to server: forward, and count the calls in a copy.
		pr, pw := io.Pipe()
		go func() {
			defer pw.Close()
			io.Copy(io.MultiWriter(up, pw), down)
		}()
		go func() {
			dec := capnp.NewDecoder(pr)
			for calls := 0; ; {
				msg, err := dec.Decode()
				if err != nil {
					io.Copy(io.Discard, pr)
					return
				}
				if m, err := rpccp.ReadRootMessage(msg); err == nil && m.Which() == rpccp.Message_Which_call {
					if calls++; calls == wantCalls {
						close(p.unmuted)
					}
				}
			}
		}()
		// Server to client: nothing until the client sent its calls.
		select {
		case <-p.unmuted:
		case <-time.After(wait):
			close(p.gaveUp)
			down.Close()
			return
		}
		io.Copy(down, up)
	}()
	return p
}

// login(t).create().gadget.open().session.increment() needs one round
// trip: the client sends all four calls before the server has said
// anything (the proxy forwards no byte of the server's until it has), and
// the chain completes. Time plays no part: a client that waited for any
// answer would stall behind the muted proxy, which then gives up.
func TestPipelinedLoginCreateOpenIncrementTakesOneRoundTrip(t *testing.T) {
	h := start(t, t.TempDir())
	token := h.token("alice")
	proxy := newMutedProxy(t, h.addr, 4, 30*time.Second)
	conn := dial(t, proxy.addr)
	ctx := testCtx(t)
	ws, r1 := conn.Login(ctx, token)
	defer r1()
	cf, r2 := ws.Create(ctx, func(p schema.Workspace_create_Params) error { return p.SetBlueprint("counter") })
	defer r2()
	of, r3 := cf.Gadget().Open(ctx, nil)
	defer r3()
	v, err := countertest.Increment(ctx, counterpb.Counter(of.Session()))
	select {
	case <-proxy.gaveUp:
		t.Fatalf("the client did not send the whole chain before hearing from the server: it needs more than one round trip")
	default:
	}
	if err != nil {
		t.Fatal(err)
	}
	if v != 1 {
		t.Fatalf("a new counter incremented to %d, want 1", v)
	}
}

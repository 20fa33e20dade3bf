package js_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"

	"github.com/gadgetd/gadgetd/schema"
)

// The protocol fixes a gadgetd server does not provoke on demand (it sends
// no Resolve and no Disembargo to a browser client in the normal course),
// shown against a bare go-capnp peer, the library gadgetd runs on. Each
// scenario runs twice: with every fix, where it must succeed, and without
// the one fix it needs, where it must fail the way capnp-es fails.

// hangGuard bounds a scenario expected to succeed: it did not hang.
const hangGuard = 30 * time.Second

// bugWait is how long a scenario expected to fail (a call that never
// returns, a capability never released) is given to prove it wrong.
const bugWait = 3 * time.Second

type peerScenario struct {
	name string
	fix  string // the fix in src/conn.js the scenario needs
	// run plays the Go side against guest, the JS side's bootstrap; boot is
	// the Go side's. It returns an error when the scenario failed. It hands
	// its releases to later, which runs them once the connection is closed:
	// go-capnp's release of a call still waiting for its answer waits too.
	run func(ctx context.Context, guest schema.Guest, boot *bootstrapSlot, later func(func())) error
}

var peerScenarios = []peerScenario{
	{name: "disembargo", fix: "honorsDisembargo", run: disembargoScenario},
	{name: "resolve", fix: "honorsResolve", run: resolveScenario},
}

func TestCapnpESFixesAgainstGoCapnp(t *testing.T) {
	node := requireNode(t)
	for _, sc := range peerScenarios {
		t.Run(sc.name+"/with every fix", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			if err := playPeer(ctx, t, node, sc, "all"); err != nil {
				t.Fatal(err)
			}
		})
		t.Run(sc.name+"/without "+sc.fix, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), bugWait)
			defer cancel()
			err := playPeer(ctx, t, node, sc, "without:"+sc.fix)
			if err == nil {
				t.Fatalf("the scenario succeeded without %s: capnp-es may have fixed the bug; drop the fix (PATCHES.md)", sc.fix)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("without %s the scenario should hang, as with capnp-es; it failed otherwise: %v", sc.fix, err)
			}
			t.Logf("without %s, as expected: %v", sc.fix, err)
		})
	}
}

// playPeer starts node on test/peer.mjs for sc with the fixes of variant,
// accepts its connection and plays sc's Go side.
func playPeer(ctx context.Context, t *testing.T, node string, sc peerScenario, variant string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	startNode(t, node, "test/peer.mjs", ln.Addr().String(), sc.name, variant)
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(hangGuard))
	c, err := ln.Accept()
	if err != nil {
		t.Fatalf("the JS peer did not connect: %v", err)
	}
	boot := &bootstrapSlot{}
	conn := rpc.NewConn(rpc.NewStreamTransport(c), &rpc.Options{
		BootstrapClient: capnp.Client(schema.SessionContext_ServerToClient(boot)),
	})
	var releases []func()
	defer func() {
		conn.Close()
		for _, release := range releases {
			release()
		}
	}()
	guest := schema.Guest(conn.Bootstrap(ctx))
	releases = append(releases, guest.Release)
	return sc.run(ctx, guest, boot, func(f func()) { releases = append(releases, f) })
}

// bootstrapSlot is the Go side's bootstrap: a SessionContext whose caller()
// runs onCaller (set by a scenario) and answers user "go".
type bootstrapSlot struct {
	noPresence
	onCaller func()
}

// noPresence is the SessionContext.present of the Go side's contexts: no
// scenario here asks who is present.
type noPresence struct{}

func (noPresence) Present(context.Context, schema.SessionContext_present) error {
	return capnp.Unimplemented("present")
}

func (b *bootstrapSlot) Caller(ctx context.Context, call schema.SessionContext_caller) error {
	if b.onCaller != nil {
		b.onCaller()
	}
	return answerCaller(call, "go")
}

func answerCaller(call schema.SessionContext_caller, name string) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	caller, err := res.NewCaller()
	if err != nil {
		return err
	}
	return caller.SetUserName(name)
}

// wait waits for f to resolve, or ctx to end: go-capnp's Struct waits on
// the answer alone.
func wait(ctx context.Context, f *capnp.Future) error {
	select {
	case <-f.Done():
		_, err := f.Struct()
		return err
	case <-ctx.Done():
		return fmt.Errorf("no answer: %w", ctx.Err())
	}
}

// namedCaller is a SessionContext whose caller is name; shutdown, if not
// nil, is closed when its last reference is released.
type namedCaller struct {
	noPresence
	name     string
	shutdown chan struct{}
}

func (n *namedCaller) Caller(ctx context.Context, call schema.SessionContext_caller) error {
	return answerCaller(call, n.name)
}

func (n *namedCaller) Shutdown() {
	if n.shutdown != nil {
		close(n.shutdown)
	}
}

// disembargoScenario: Go calls the JS Guest's open with a context of its
// own, pipelines a call onto the session the answer will hold, and once the
// answer is in (it is Go's own context), calls it again directly. go-capnp
// embargoes that direct call until the Disembargo it sends comes back, and
// the pipelined call must be delivered through the JS side: both must
// return. capnp-es drops the Disembargo and never delivers the pipelined
// call.
func disembargoScenario(ctx context.Context, guest schema.Guest, _ *bootstrapSlot, later func(func())) error {
	own := schema.SessionContext_ServerToClient(&namedCaller{name: "go"})
	later(own.Release)
	opened, release := guest.Open(ctx, func(p schema.Guest_open_Params) error {
		return p.SetContext(own.AddRef())
	})
	later(release)
	session := schema.SessionContext(opened.Session())
	pipelined, releasePipelined := session.Caller(ctx, nil)
	later(releasePipelined)
	if err := wait(ctx, opened.Future); err != nil {
		return fmt.Errorf("open: %w", err)
	}
	direct, releaseDirect := session.Caller(ctx, nil)
	later(releaseDirect)
	for what, f := range map[string]schema.SessionContext_caller_Results_Future{"pipelined": pipelined, "direct (embargoed)": direct} {
		if err := wait(ctx, f.Future); err != nil {
			return fmt.Errorf("the %s call: %w", what, err)
		}
		res, _ := f.Struct()
		caller, _ := res.Caller()
		if name, _ := caller.UserName(); name != "go" {
			return fmt.Errorf("the %s call reached %q, want the Go side's own context", what, name)
		}
	}
	return nil
}

// resolveScenario: Go passes the JS Guest's open a promise for a context:
// the session of a call to a local Guest that has not returned. When the JS
// side asks (it calls the Go bootstrap), that call returns, the promise
// resolves, and go-capnp sends a Resolve whose descriptor gives the JS side
// a reference to the context. The JS side calls through the promise and
// releases its context, the Go side lets go of its own references, and then
// the context must have none left. capnp-es drops the Resolve, and with it
// the reference it carried, so the context lives as long as the connection.
func resolveScenario(ctx context.Context, guest schema.Guest, boot *bootstrapSlot, later func(func())) error {
	released := make(chan struct{})
	resolve := make(chan struct{})
	boot.onCaller = func() { close(resolve) }
	local := schema.Guest_ServerToClient(&resolvingGuest{
		resolve: resolve,
		session: schema.SessionContext_ServerToClient(&namedCaller{name: "resolved", shutdown: released}),
	})
	pending, releasePending := local.Open(ctx, nil)
	promise := schema.SessionContext(pending.Session())

	opened, releaseOpened := guest.Open(ctx, func(p schema.Guest_open_Params) error {
		return p.SetContext(promise.AddRef())
	})
	release := sync.OnceFunc(func() {
		releaseOpened()
		promise.Release()
		releasePending()
		local.Release()
	})
	later(release)
	if err := wait(ctx, opened.Future); err != nil {
		return fmt.Errorf("open: %w", err)
	}
	release()
	select {
	case <-released:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the resolved context was never released (the JS side holds the reference its Resolve carried): %w", ctx.Err())
	}
}

// resolvingGuest is a Guest whose open returns session once resolve is
// closed.
type resolvingGuest struct {
	resolve <-chan struct{}
	session schema.SessionContext
}

func (g *resolvingGuest) Open(ctx context.Context, call schema.Guest_open) error {
	select {
	case <-g.resolve:
	case <-ctx.Done():
		return ctx.Err()
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetSession(capnp.Client(g.session))
}

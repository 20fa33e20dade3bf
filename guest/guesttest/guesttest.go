// Package guesttest runs a gadget in a Go test, in the sandbox gadgetd runs
// it in: it builds the gadget's guest package to WebAssembly with the Go
// toolchain, starts it under the real runtime (package wasmhost), with its
// storage in memory and the per-call transactions of the server, and opens
// sessions on it as the users a test makes up.
//
// A blueprint made by `gadgetd blueprint new` has a test that uses it:
//
//	func TestVisitsAreCountedPerUser(t *testing.T) {
//		g := guesttest.Start(t, ".")
//		s := hellopb.Hello(g.Open(t, guesttest.Caller{UserID: "u1", UserName: "ann"}))
//		...
//	}
//
// The test needs what `gadgetd blueprint build` needs: the go command, and
// the bindings generated from the blueprint's schema.
package guesttest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// buildTimeout bounds the build of the guest; the first wasm build of the Go
// runtime on a cold cache takes a while.
const buildTimeout = 5 * time.Minute

// Gadget is one gadget running for one test. Its methods may be called from
// the test's goroutine only; Start arranges for it to be closed when the
// test ends.
type Gadget struct {
	rt     *wasmhost.Runtime
	mod    *wasmhost.Module
	host   *memhost.Host
	gadget *wasmhost.Sandbox

	// mu guards open, which the sessions' contexts read from the runtime's
	// goroutines.
	mu   sync.Mutex
	open []*openSession // the sessions open now, oldest first
}

// openSession is one session Open opened and nobody has released yet.
type openSession struct{ caller Caller }

// Start builds the guest package in dir (usually ".", the package under
// test) and starts it with empty storage.
func Start(t testing.TB, dir string) *Gadget {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	wasm := filepath.Join(t.TempDir(), "gadget.wasm")
	if err := wasmbuild.Build(ctx, dir, ".", wasm); err != nil {
		t.Fatalf("guesttest: %v", err)
	}
	rt, err := wasmhost.New(ctx)
	if err != nil {
		t.Fatalf("guesttest: %v", err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	raw, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatalf("guesttest: %v", err)
	}
	mod, err := rt.Compile(ctx, raw)
	if err != nil {
		t.Fatalf("guesttest: compiling %s: %v", dir, err)
	}
	t.Cleanup(func() { mod.Close(context.Background()) })
	g := &Gadget{rt: rt, mod: mod, host: memhost.New()}
	g.start(t)
	return g
}

func (g *Gadget) start(t testing.TB) {
	g.gadget = g.rt.NewSandbox(g.mod, g.host.Client(), wasmhost.WithName(t.Name()), wasmhost.WithCallScope(g.host.Begin))
	t.Cleanup(g.gadget.Close)
}

// Caller is who opens a session: what the server fills in from the
// authenticated user (schema.Caller).
type Caller struct {
	// UserID is the caller's pseudonym in this gadget.
	UserID string
	// UserName is for display only.
	UserName string
	// Role is the caller's role on the gadget (the zero value is viewer).
	Role schema.Role
}

// Open opens a session as caller and returns it, for the test to cast to
// the blueprint's session type (hellopb.Hello(c)). The session is released
// when the test ends, or when the test releases it; until then its caller
// is among those its gadget's sessions' contexts answer as present.
func (g *Gadget) Open(t testing.TB, caller Caller) capnp.Client {
	t.Helper()
	ctx := context.Background()
	// Present before the guest is asked, as on gadgetd: a guest that asks
	// during open finds its own caller.
	here := g.enter(caller)
	guest := g.gadget.Guest()
	defer guest.Release()
	f, release := guest.Open(ctx, func(p schema.Guest_open_Params) error {
		c, err := p.NewCaller()
		if err != nil {
			return err
		}
		if err := caller.fill(c); err != nil {
			return err
		}
		return p.SetContext(schema.SessionContext_ServerToClient(sessionContext{caller: caller, g: g}))
	})
	defer release()
	if _, err := f.Struct(); err != nil {
		g.leave(here)
		t.Fatalf("guesttest: opening a session as %+v: %v", caller, err)
	}
	session := capnp.NewClient(&openHook{session: f.Session().AddRef(), leave: func() { g.leave(here) }})
	t.Cleanup(session.Release)
	return session
}

func (g *Gadget) enter(caller Caller) *openSession {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := &openSession{caller: caller}
	g.open = append(g.open, s)
	return s
}

func (g *Gadget) leave(s *openSession) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = slices.DeleteFunc(g.open, func(o *openSession) bool { return o == s })
}

// present returns who has a session open, as gadgetd's SessionContext
// answers: one Caller per user, with their highest role, in the order of
// their oldest open session.
func (g *Gadget) present() []Caller {
	g.mu.Lock()
	defer g.mu.Unlock()
	var people []Caller
	for _, s := range g.open {
		i := slices.IndexFunc(people, func(c Caller) bool { return c.UserID == s.caller.UserID })
		if i < 0 {
			people = append(people, s.caller)
			continue
		}
		people[i].Role = max(people[i].Role, s.caller.Role)
	}
	return people
}

// openHook is a session Open returned: it forwards every call to the
// guest's session and leaves the open sessions when its last reference is
// gone.
type openHook struct {
	session capnp.Client
	leave   func()
}

func (h *openHook) Send(ctx context.Context, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
	return h.session.SendCall(ctx, s)
}

func (h *openHook) Recv(ctx context.Context, r capnp.Recv) capnp.PipelineCaller {
	return h.session.RecvCall(ctx, r)
}

// Brand is the session's own, so the runtime still knows its session when
// a test hands it back to the gadget.
func (h *openHook) Brand() capnp.Brand {
	snap := h.session.Snapshot()
	defer snap.Release()
	return snap.Brand()
}

func (h *openHook) Shutdown() {
	h.leave()
	h.session.Release()
}

func (h *openHook) String() string { return "guesttest " + h.session.String() }

func (c Caller) fill(dst schema.Caller) error {
	dst.SetRole(c.Role)
	if err := dst.SetUserName(c.UserName); err != nil {
		return err
	}
	return dst.SetUserId(c.UserID)
}

// sessionContext is the SessionContext a session opened by Open gets: its
// caller method answers the Caller the session was opened as (a test host
// has no tokens to revoke), and present the callers of the sessions of its
// gadget open now.
type sessionContext struct {
	caller Caller
	g      *Gadget
}

func (sc sessionContext) Caller(ctx context.Context, call schema.SessionContext_caller) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	dst, err := res.NewCaller()
	if err != nil {
		return err
	}
	return sc.caller.fill(dst)
}

func (sc sessionContext) Present(ctx context.Context, call schema.SessionContext_present) error {
	people := sc.g.present()
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewPresent(int32(len(people)))
	if err != nil {
		return err
	}
	for i, c := range people {
		if err := c.fill(list.At(i)); err != nil {
			return err
		}
	}
	return nil
}

// Restart closes the gadget and starts it again on the same storage: a
// fresh instance, as gadgetd starts one after stopping an idle gadget or
// after a server restart, so a test can check that what must last is in
// storage. Sessions opened before the restart fail; open new ones.
func (g *Gadget) Restart(t testing.TB) {
	t.Helper()
	g.mu.Lock()
	g.open = nil // those sessions are gone with their instance
	g.mu.Unlock()
	g.gadget.Close()
	g.start(t)
}

// Logs returns the lines the gadget has logged (Host.log), oldest first.
func (g *Gadget) Logs() []string { return g.host.Logs() }

// Stored returns the committed value of a storage key.
func (g *Gadget) Stored(key string) (value []byte, found bool) { return g.host.Get(key) }

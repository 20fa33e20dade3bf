package wasmhost_test

// Exception types across the sandbox boundary (issue 6, item 6): a guest's
// error reaches the caller with its Cap'n Proto type, a host capability's
// error reaches guest code with its type, and the host's own conditions are
// typed (a full queue is overloaded, a closed gadget or a revoked capability
// disconnected, an unknown method unimplemented). Each test calls through
// real wazero instances of real guests: excguest (the Go SDK) and rawabi
// (frames by hand).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

const excPkg = testguests + "excguest" // typed errors through the guest SDK

var excTypes = []exc.Type{exc.Failed, exc.Overloaded, exc.Disconnected, exc.Unimplemented}

// typedHost is a schema.Host whose log(TEXT) fails with the exception type
// TEXT names ("overloaded", …), and whose log("block") waits for unblock.
type typedHost struct {
	entered chan struct{} // receives when log("block") starts
	unblock chan struct{} // closed to end every log("block")
}

func (h *typedHost) Storage(context.Context, schema.Host_storage) error {
	return capnp.Unimplemented("typedHost has no storage")
}

// Gatekeeper: these tests bind nothing.
func (h *typedHost) Gatekeeper(ctx context.Context, call schema.Host_gatekeeper) error {
	return errors.New("no such binding")
}

func (h *typedHost) Log(ctx context.Context, call schema.Host_log) error {
	text, err := call.Args().Text()
	if err != nil {
		return err
	}
	if text == "block" {
		h.entered <- struct{}{}
		<-h.unblock
		return nil
	}
	for _, typ := range excTypes {
		if text == typ.String() {
			return exc.New(typ, "", "the host fails with "+text)
		}
	}
	return nil
}

// excBox is one gadget of excguest over a typedHost, on a Runtime of its own.
type excBox struct {
	gadget *wasmhost.Sandbox
	host   *typedHost
}

func newExcBox(t *testing.T, opts ...wasmhost.Option) *excBox {
	t.Helper()
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, append([]wasmhost.Option{wasmhost.WithCompilationCacheDir(sharedCacheDir(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	mod, err := rt.Compile(ctx, wasmbuild.ForTest(t, excPkg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mod.Close(ctx) })
	h := &typedHost{entered: make(chan struct{}, 1), unblock: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-h.unblock:
		default:
			close(h.unblock)
		}
	})
	b := &excBox{host: h}
	b.gadget = rt.NewSandbox(mod, schema.Host(capserver.New(schema.Host_Methods(nil, h), h, nil)), wasmhost.WithName("exc"))
	t.Cleanup(b.gadget.Close)
	return b
}

func (b *excBox) open(t *testing.T) capnp.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g := b.gadget.Guest()
	defer g.Release()
	f, release := g.Open(ctx, nil)
	defer release()
	s := f.Session().AddRef()
	if err := s.Resolve(ctx); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(s.Release)
	return s
}

// wantType fails unless err is an exception of type want, as go-capnp's
// callers test it (exc.TypeOf looks at the error itself, not its chain).
func wantType(t *testing.T, what string, err error, want exc.Type) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: succeeded, want a %v exception", what, want)
	}
	if got := exc.TypeOf(err); got != want {
		t.Fatalf("%s: a %v exception (%v), want %v", what, got, err, want)
	}
}

func TestGuestErrorTypesReachTheCaller(t *testing.T) {
	b := newExcBox(t)
	s := b.open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, typ := range excTypes {
		for _, cmd := range []string{"throw:", "wrap:"} {
			_, err := guestCommand(ctx, s, cmd+typ.String())
			wantType(t, cmd+typ.String(), err, typ)
			if !strings.Contains(err.Error(), "excguest throws "+typ.String()) {
				t.Errorf("%s%v: error %q lost the guest's reason", cmd, typ, err)
			}
		}
	}
	// Methods the guest does not implement: one its server has and
	// refuses, one it does not know at all.
	ans, release := schema.Storage(s).Put(ctx, nil)
	_, err := ans.Struct()
	release()
	wantType(t, "Storage.put, refused by the guest", err, exc.Unimplemented)
	wantType(t, "Storage method @9", callMethodRaw(ctx, s, capnp.Method{InterfaceID: schema.Storage_TypeID, MethodID: 9}), exc.Unimplemented)
	wantType(t, "an unknown interface", callMethodRaw(ctx, s, capnp.Method{InterfaceID: 0x0123456789abcdef}), exc.Unimplemented)
}

// callMethodRaw calls any method with empty params and returns its error.
func callMethodRaw(ctx context.Context, c capnp.Client, m capnp.Method) error {
	ans, release := c.SendCall(ctx, capnp.Send{Method: m})
	defer release()
	_, err := ans.Struct()
	return err
}

func TestHostErrorTypesReachGuestCodeAndTravelBack(t *testing.T) {
	b := newExcBox(t)
	s := b.open(t)
	for _, typ := range excTypes {
		// Guest code sees the type: exc.TypeOf and capnp.IsDisconnected
		// work on the error of its call to the host.
		want := fmt.Sprintf("type=%v disconnected=%v: ", typ, typ == exc.Disconnected)
		if got := mustGuestCommand(t, s, "host:"+typ.String()); !strings.HasPrefix(got, want) || !strings.Contains(got, "the host fails with "+typ.String()) {
			t.Errorf("the guest saw the host's %v error as %q, want %q…", typ, got, want)
		}
		// Returned as is, it reaches the caller with the same type.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := guestCommand(ctx, s, "relay:"+typ.String())
		cancel()
		wantType(t, "relay:"+typ.String(), err, typ)
	}
}

// Guards: ErrOverloaded's type (sandbox.go) and exception (errors.go).
func TestCallsPastTheQueueLimitAreOverloadedExceptions(t *testing.T) {
	b := newExcBox(t, wasmhost.WithQueueLimit(1))
	s := b.open(t)
	busy := goGuestCommand(s, "host:block")
	<-b.host.entered // the worker is inside the guest, waiting on the host
	const extra = 4
	results := make(chan attackOutcome, extra)
	for range extra {
		go func() { results <- <-goGuestCommand(s, "host:ok") }()
	}
	var overloaded int
	for range extra - 1 { // one call fits in the queue; it waits for busy
		r := <-results
		wantType(t, "a call past the queue", r.err, exc.Overloaded)
		overloaded++
	}
	close(b.host.unblock)
	if r := <-results; r.err != nil || r.out != "ok" {
		t.Fatalf("the queued call: %q, %v", r.out, r.err)
	}
	if r := <-busy; r.err != nil {
		t.Fatalf("the blocked call: %v", r.err)
	}
}

// Guards: ErrClosed's type (sandbox.go) and exception (errors.go).
func TestCallsToAClosedGadgetAreDisconnected(t *testing.T) {
	b := newExcBox(t)
	s := b.open(t)
	mustGuestCommand(t, s, "host:ok")
	b.gadget.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := guestCommand(ctx, s, "host:ok")
	wantType(t, "a session of a closed gadget", err, exc.Disconnected)
	if !capnp.IsDisconnected(err) {
		t.Fatalf("capnp.IsDisconnected(%v) = false", err)
	}
}

// The raw ABI: the type is a field of the exception frame (docs/ABI.md §4),
// so a guest written without the SDK sends and receives it too.
func TestRawExceptionFramesCarryTheirType(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, rawPkg, "raw")
	s := b.open(t, "alice")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, typ := range excTypes {
		_, err := guestCommand(ctx, s, fmt.Sprintf("throw:%d", typ))
		wantType(t, fmt.Sprintf("throw:%d", typ), err, typ)
	}
	// A type this host does not know is failed, not a number clients
	// cannot interpret.
	_, err := guestCommand(ctx, s, "throw:77")
	wantType(t, "throw:77", err, exc.Failed)

	if got := mustGuestCommand(t, s, "host-method:9"); !strings.HasPrefix(got, "exception (unimplemented): ") {
		t.Errorf("Host method @9 reached the guest as %q, want an unimplemented exception", got)
	}
	grab := mustGuestCommand(t, s, "grab")
	var storage int
	if _, err := fmt.Sscanf(grab, "storage=%d", &storage); err != nil {
		t.Fatalf("grab = %q", grab)
	}
	b.host.RevokeAll(nil)
	if got := mustGuestCommand(t, s, fmt.Sprintf("put:%d:after-revoke", storage)); !strings.HasPrefix(got, "exception (disconnected): ") || !strings.HasSuffix(got, "capability revoked") {
		t.Errorf("a put through a revoked Storage reached the guest as %q, want a disconnected exception", got)
	}
}

// Guards: ErrRestarted's type (sandbox.go). Sessions survive their instance
// (the host reopens them); any other object of a stopped instance is gone,
// and its holder is told to get a new one.
func TestObjectsOfAStoppedInstanceAreDisconnected(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, rawPkg, "raw")
	s := b.open(t, "alice")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, release := schema.Storage(s).Get(ctx, func(p schema.Storage_get_Params) error { return p.SetKey("export") })
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	ptr, err := capnp.Struct(res).Ptr(0)
	if err != nil {
		t.Fatal(err)
	}
	obj := ptr.Interface().Client().AddRef()
	defer obj.Release()
	if _, err := guestCommand(ctx, s, "garbage-answer"); err == nil {
		t.Fatal("garbage-answer succeeded; it must stop the instance")
	}
	_, err = guestCommand(ctx, obj, "ok")
	wantType(t, "a call on an object of the stopped instance", err, exc.Disconnected)
	if !strings.Contains(err.Error(), wasmhost.ErrRestarted.Error()) {
		t.Fatalf("error %q does not say the instance stopped", err)
	}
}

package wasmhost_test

// Guest ABI conformance: one table of checks, run unchanged against every
// guest we have that implements the counter schema, whatever it is written
// in. The Go counter (internal/testcounter, through the guest SDK) and a guest
// written by hand in WebAssembly text (internal/testguests/watguest, no SDK,
// no WASI) must behave the same; if a check only passes for Go, docs/ABI.md
// is not the whole contract.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/internal/frame"
	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/schema/abi"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// conformanceGuests are the guests under test: a name and how to get the
// module bytes.
var conformanceGuests = []struct {
	name  string
	build func(t *testing.T) []byte
}{
	{"go-counter", func(t *testing.T) []byte {
		return wasmbuild.ForTest(t, "github.com/gadgetd/gadgetd/internal/testcounter")
	}},
	{"wat-counter", buildWATGuest},
}

// buildWATGuest is internal/testguests/watguest/guest.wat, assembled (see
// wasmhost.WATGuest).
func buildWATGuest(t *testing.T) []byte { return wasmhost.WATGuest(t) }

// conformanceChecks run against each guest. Every check gets a fresh gadget
// (fresh instance, empty storage) of the guest's compiled module.
var conformanceChecks = []struct {
	name string
	run  func(t *testing.T, g *conformanceGuest)
}{
	{"compiles and validates", func(t *testing.T, g *conformanceGuest) {
		// TestGuestConformance compiled it already; compile it again on a
		// runtime of its own (its code comes from the compilation cache,
		// the validation runs again).
		ctx := context.Background()
		rt, err := wasmhost.New(ctx, wasmhost.WithCompilationCacheDir(g.cacheDir))
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close(ctx)
		m, err := rt.Compile(ctx, g.wasm)
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		m.Close(ctx)
	}},

	{"open returns a working session", func(t *testing.T, g *conformanceGuest) {
		b := g.newBox(t)
		s := b.open(t)
		defer s.Release()
		if !capnp.Client(s).IsValid() {
			t.Fatal("Guest.open returned a null session")
		}
		if v := b.get(t, s); v != 0 {
			t.Fatalf("get on a new gadget = %d, want 0", v)
		}
		// A second session is another object over the same state.
		s2 := b.open(t)
		defer s2.Release()
		b.increment(t, s, 1, 1)
		if v := b.get(t, s2); v != 1 {
			t.Fatalf("get through a second session = %d, want 1", v)
		}
	}},

	{"increment and get keep the value in host storage", func(t *testing.T, g *conformanceGuest) {
		b := g.newBox(t)
		s := b.open(t)
		defer s.Release()
		b.increment(t, s, 0, 1) // by 0 means by 1
		b.increment(t, s, 1, 2)
		b.increment(t, s, 40, 42)
		b.increment(t, s, -50, -8)
		if v := b.get(t, s); v != -8 {
			t.Fatalf("get = %d, want -8", v)
		}
		b.wantStored(t, -8)
		if b.host.Commits() == 0 {
			t.Fatal("no call scope committed: the writes did not go through the host's transactions")
		}
	}},

	{"the value is read from host storage, not guest memory", func(t *testing.T, g *conformanceGuest) {
		b := g.newBox(t)
		mustPut(t, b.host, "value", be64(41))
		s := b.open(t)
		defer s.Release()
		if v := b.get(t, s); v != 41 {
			t.Fatalf("get = %d with 41 in storage, want 41", v)
		}
		mustPut(t, b.host, "value", be64(1000))
		b.increment(t, s, 1, 1001)
		b.wantStored(t, 1001)
		// A different gadget of the same module on the same storage (a
		// fresh instance, empty memory) sees the value.
		b2 := g.newBoxOn(t, b.host)
		s2 := b2.open(t)
		defer s2.Release()
		if v := b2.get(t, s2); v != 1001 {
			t.Fatalf("get on a fresh instance = %d, want 1001", v)
		}
	}},

	{"unknown methods are errors, not crashes, and the instance keeps working", func(t *testing.T, g *conformanceGuest) {
		b := g.newBox(t)
		main := b.gadget.Guest()
		defer main.Release()
		s := b.open(t)
		defer s.Release()
		b.increment(t, s, 5, 5)
		for _, tc := range []struct {
			what   string
			target capnp.Client
			method capnp.Method
		}{
			{"Counter method @99 on a session", capnp.Client(s), capnp.Method{InterfaceID: counterpb.Counter_TypeID, MethodID: 99}},
			{"an unknown interface on a session", capnp.Client(s), capnp.Method{InterfaceID: 0x0123456789abcdef, MethodID: 0}},
			{"Host.storage on a session", capnp.Client(s), capnp.Method{InterfaceID: schema.Host_TypeID, MethodID: 0}},
			{"Guest method @7 on the main object", capnp.Client(main), capnp.Method{InterfaceID: schema.Guest_TypeID, MethodID: 7}},
			{"Counter.get on the main object", capnp.Client(main), capnp.Method{InterfaceID: counterpb.Counter_TypeID, MethodID: 1}},
		} {
			err := b.callRaw(tc.target, tc.method)
			if err == nil {
				t.Fatalf("%s: succeeded, want an error", tc.what)
			}
			if !strings.Contains(err.Error(), "unimplemented") {
				t.Errorf("%s: error %q does not say the method is unimplemented", tc.what, err)
			}
			if typ := exc.TypeOf(err); typ != exc.Unimplemented {
				t.Errorf("%s: a %v exception, want unimplemented (the exception frame's type, docs/ABI.md §4)", tc.what, typ)
			}
			for _, bad := range []string{"crashed", "broke the guest ABI", "stopped", "restarted"} {
				if strings.Contains(err.Error(), bad) {
					t.Errorf("%s: error %q says the instance died; an unknown method must only fail the call", tc.what, err)
				}
			}
			// The same session keeps working on the same instance: one
			// delivery, no reopen (a dead instance would make the host
			// reopen the session first, a second top-level delivery).
			before := b.scopes.Load()
			b.increment(t, s, 1, 0)
			if n := b.scopes.Load() - before; n != 1 {
				t.Fatalf("after %s, increment took %d deliveries, want 1: the instance was restarted", tc.what, n)
			}
		}
		b.wantStored(t, 10)
	}},

	{"a failing call is an error and changes nothing", func(t *testing.T, g *conformanceGuest) {
		b := g.newBox(t)
		s := b.open(t)
		defer s.Release()
		// The long value makes the host's answer to Storage.get span two
		// segments, so the guest must follow a far pointer to see it.
		for i, corrupt := range [][]byte{{1, 2, 3}, bytes.Repeat([]byte{7}, 4000)} {
			mustPut(t, b.host, "value", corrupt)
			for _, m := range []capnp.Method{
				{InterfaceID: counterpb.Counter_TypeID, MethodID: 0}, // increment
				{InterfaceID: counterpb.Counter_TypeID, MethodID: 1}, // get
			} {
				if err := b.callRaw(capnp.Client(s), m); err == nil || !strings.Contains(err.Error(), "corrupt") {
					t.Fatalf("method @%d over a corrupt stored value of %d bytes: %v, want an error saying it is corrupt", m.MethodID, len(corrupt), err)
				}
			}
			if v, _ := b.host.Get("value"); !bytes.Equal(v, corrupt) {
				t.Fatalf("storage after the failed increment = %x, want it unchanged", v)
			}
			mustPut(t, b.host, "value", be64(int64(7+i)))
			before := b.scopes.Load()
			if v := b.get(t, s); v != int64(7+i) {
				t.Fatalf("get after repairing storage = %d, want %d", v, 7+i)
			}
			if n := b.scopes.Load() - before; n != 1 {
				t.Fatalf("get took %d deliveries, want 1: the failed call restarted the instance", n)
			}
		}
	}},

	{"dropped sessions are released and new ones still work", func(t *testing.T, g *conformanceGuest) {
		b := g.newBox(t)
		keep := b.open(t)
		defer keep.Release()
		for range 20 {
			s := b.open(t)
			b.increment(t, s, 1, 0)
			s.Release() // the host sends the guest a release frame
		}
		b.increment(t, keep, 1, 21)
		s := b.open(t)
		defer s.Release()
		if v := b.get(t, s); v != 21 {
			t.Fatalf("get on a session opened after 20 were released = %d, want 21", v)
		}
	}},

	{"host capabilities the guest is done with are released", func(t *testing.T, g *conformanceGuest) {
		// Every Host.storage() lends the guest a new host import; a guest
		// that never releases them hits the limit after a few calls.
		b := g.newBoxWith(t, memhost.New(), wasmhost.WithMaxImports(8))
		s := b.open(t)
		defer s.Release()
		for i := int64(1); i <= 40; i++ {
			b.increment(t, s, 1, i)
			if v := b.get(t, s); v != i {
				t.Fatalf("get = %d, want %d", v, i)
			}
		}
	}},

	{"a session survives its instance being evicted", func(t *testing.T, g *conformanceGuest) {
		// The host reopens the session on a fresh instance by calling
		// Guest.open again: open must be repeatable.
		b := g.newBoxWith(t, memhost.New(), wasmhost.WithIdleTimeout(50*time.Millisecond))
		s := b.open(t)
		defer s.Release()
		b.increment(t, s, 3, 3)
		deadline := time.Now().Add(5 * time.Second)
		for b.gadget.Live() {
			if time.Now().After(deadline) {
				t.Fatal("the idle instance was not evicted")
			}
			time.Sleep(10 * time.Millisecond)
		}
		b.increment(t, s, 1, 4)
		b.wantStored(t, 4)
	}},

	{"Compile rejects the module without each required export", func(t *testing.T, g *conformanceGuest) {
		// Compile validates the module's interface (exports, imports,
		// memory), not its code, so the guest's function bodies are
		// replaced by `unreachable`: the same interface compiles in
		// milliseconds instead of seconds (minutes under -race).
		ctx := context.Background()
		stub := stubCode(t, g.wasm)
		m, err := g.rt.Compile(ctx, stub)
		if err != nil {
			t.Fatalf("Compile of the guest with stubbed code: %v", err)
		}
		m.Close(ctx)
		for _, name := range []string{"memory", "_initialize", "gadgetd_alloc", "gadgetd_deliver"} {
			m, err := g.rt.Compile(ctx, withoutExport(t, stub, name))
			if err == nil {
				m.Close(ctx)
				t.Errorf("Compile accepted the module without export %q", name)
			} else if !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
				t.Errorf("Compile without export %q: error %q does not name it", name, err)
			}
		}
	}},
}

// conformanceKnownIssues lists checks a guest is known to fail, by
// "guest/check", with the reason. Each entry is a bug to fix, not a waiver:
// remove it with the fix.
var conformanceKnownIssues = map[string]string{}

func TestGuestConformance(t *testing.T) {
	for _, gt := range conformanceGuests {
		t.Run(gt.name, func(t *testing.T) {
			ctx := context.Background()
			wasm := gt.build(t)
			// Runtimes of one guest share compiled code: compiling the
			// Go guest takes seconds, and much longer under -race.
			cacheDir := t.TempDir()
			rt, err := wasmhost.New(ctx, wasmhost.WithCompilationCacheDir(cacheDir))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rt.Close(ctx) })
			mod, err := rt.Compile(ctx, wasm)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			t.Cleanup(func() { mod.Close(ctx) })
			g := &conformanceGuest{name: gt.name, wasm: wasm, rt: rt, mod: mod, cacheDir: cacheDir}
			for _, c := range conformanceChecks {
				t.Run(c.name, func(t *testing.T) {
					if why, ok := conformanceKnownIssues[gt.name+"/"+c.name]; ok {
						t.Skip("known issue: " + why)
					}
					c.run(t, g)
				})
			}
		})
	}
}

// conformanceGuest is one guest module compiled on a runtime.
type conformanceGuest struct {
	name     string
	wasm     []byte
	rt       *wasmhost.Runtime
	mod      *wasmhost.Module
	cacheDir string // compilation cache shared by the guest's runtimes
}

// conformanceBox is one gadget of the guest with its test host. scopes
// counts top-level deliveries (WithCallScope brackets each one).
type conformanceBox struct {
	gadget *wasmhost.Sandbox
	host   *memhost.Host
	scopes *atomic.Int64
}

func (g *conformanceGuest) newBox(t *testing.T) *conformanceBox {
	return g.newBoxOn(t, memhost.New())
}

func (g *conformanceGuest) newBoxOn(t *testing.T, host *memhost.Host) *conformanceBox {
	t.Helper()
	return g.newBoxWith(t, host)
}

// newBoxWith makes the gadget on a runtime of its own when opts are given.
func (g *conformanceGuest) newBoxWith(t *testing.T, host *memhost.Host, opts ...wasmhost.Option) *conformanceBox {
	t.Helper()
	rt, mod := g.rt, g.mod
	if len(opts) > 0 {
		ctx := context.Background()
		var err error
		opts = append([]wasmhost.Option{wasmhost.WithCompilationCacheDir(g.cacheDir)}, opts...)
		if rt, err = wasmhost.New(ctx, opts...); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(ctx) })
		if mod, err = rt.Compile(ctx, g.wasm); err != nil {
			t.Fatalf("Compile: %v", err)
		}
		t.Cleanup(func() { mod.Close(ctx) })
	}
	b := &conformanceBox{host: host, scopes: new(atomic.Int64)}
	scope := func() func(error) error {
		b.scopes.Add(1)
		return host.Begin()
	}
	b.gadget = rt.NewSandbox(mod, host.Client(), wasmhost.WithName(g.name), wasmhost.WithCallScope(scope))
	t.Cleanup(b.gadget.Close)
	return b
}

func (b *conformanceBox) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (b *conformanceBox) open(t *testing.T) counterpb.Counter {
	t.Helper()
	ctx := b.ctx(t)
	main := b.gadget.Guest()
	defer main.Release()
	f, release := main.Open(ctx, func(p schema.Guest_open_Params) error {
		c, err := p.NewCaller()
		if err != nil {
			return err
		}
		c.SetRole(schema.Role_owner)
		if err := c.SetUserName("conformance"); err != nil {
			return err
		}
		return c.SetUserId("u-conformance")
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("Guest.open: %v", err)
	}
	return counterpb.Counter(res.Session().AddRef())
}

// increment adds by and checks the result (want 0: any result, only no
// error).
func (b *conformanceBox) increment(t *testing.T, c counterpb.Counter, by, want int64) {
	t.Helper()
	f, release := c.Increment(b.ctx(t), func(p counterpb.Counter_increment_Params) error {
		p.SetBy(by)
		return nil
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("increment(%d): %v", by, err)
	}
	if want != 0 && res.Value() != want {
		t.Fatalf("increment(%d) = %d, want %d", by, res.Value(), want)
	}
}

func (b *conformanceBox) get(t *testing.T, c counterpb.Counter) int64 {
	t.Helper()
	f, release := c.Get(b.ctx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	return res.Value()
}

// callRaw calls any method with empty params and returns its error.
func (b *conformanceBox) callRaw(c capnp.Client, m capnp.Method) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ans, release := c.SendCall(ctx, capnp.Send{Method: m, ArgsSize: capnp.ObjectSize{DataSize: 8}})
	defer release()
	_, err := ans.Struct()
	return err
}

// wantStored checks the counter as the host stores it: key "value", 8
// big-endian bytes.
func (b *conformanceBox) wantStored(t *testing.T, want int64) {
	t.Helper()
	v, ok := b.host.Get("value")
	if !ok || !bytes.Equal(v, be64(want)) {
		t.Fatalf("host storage holds %x (found %v), want %x", v, ok, be64(want))
	}
}

func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// withoutExport returns wasm with the export called name removed from its
// export section (the function or memory itself stays).
func withoutExport(t *testing.T, wasm []byte, name string) []byte {
	t.Helper()
	found := false
	out := rewriteSection(t, wasm, 7, func(body []byte) []byte { // export: vec(name, kind, index)
		count, n := readULEB(t, body)
		rest := body[n:]
		var kept []byte
		var keptCount uint64
		for range count {
			l, n := readULEB(t, rest)
			entryName := string(rest[n : n+int(l)])
			_, m := readULEB(t, rest[n+int(l)+1:])
			entry := rest[:n+int(l)+1+m]
			rest = rest[len(entry):]
			if entryName == name {
				found = true
				continue
			}
			kept = append(kept, entry...)
			keptCount++
		}
		return append(binary.AppendUvarint(nil, keptCount), kept...)
	})
	if !found {
		t.Fatalf("withoutExport: the module has no export %q", name)
	}
	return out
}

// stubCode returns wasm with every function body replaced by `unreachable`,
// which is valid for any function type: the module keeps its interface.
func stubCode(t *testing.T, wasm []byte) []byte {
	t.Helper()
	return rewriteSection(t, wasm, 10, func(body []byte) []byte { // code: vec(size, locals, expr)
		count, _ := readULEB(t, body)
		out := binary.AppendUvarint(nil, count)
		for range count {
			out = append(out, 3, 0, 0x00, 0x0b) // 3 bytes: no locals, unreachable, end
		}
		return out
	})
}

// rewriteSection returns wasm with the body of each section with the given
// id replaced by edit(body).
func rewriteSection(t *testing.T, wasm []byte, id byte, edit func([]byte) []byte) []byte {
	t.Helper()
	if len(wasm) < 8 {
		t.Fatalf("not a wasm module")
	}
	out := append([]byte(nil), wasm[:8]...)
	for p := 8; p < len(wasm); {
		sid := wasm[p]
		size, n := readULEB(t, wasm[p+1:])
		body := wasm[p+1+n : p+1+n+int(size)]
		p += 1 + n + int(size)
		if sid == id {
			body = edit(body)
		}
		out = append(out, sid)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	return out
}

// readULEB decodes an unsigned LEB128 number: the value and its length.
func readULEB(t *testing.T, b []byte) (uint64, int) {
	t.Helper()
	v, n := binary.Uvarint(b)
	if n <= 0 {
		t.Fatalf("malformed LEB128 in the wasm module")
	}
	return v, n
}

// The worked examples in docs/ABI.md must be what go-capnp actually
// encodes: a guest's call to Storage.get on host import 5, and the host's
// answer to Host.storage() lending import 5, ready for take.
func TestABIDocWorkedExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "ABI.md"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, f abi.Frame) {
		t.Helper()
		b, err := frame.Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(b); i += 8 {
			line := fmt.Sprintf("%3d  % x", i, b[i:i+8])
			if !bytes.Contains(doc, []byte(line)) {
				t.Errorf("docs/ABI.md's worked example of %s lacks the line %q; the frame is %d bytes:\n% x", what, line, len(b), b)
				return
			}
		}
	}

	call, err := frame.New()
	if err != nil {
		t.Fatal(err)
	}
	defer call.Message().Release()
	c, err := call.NewCall()
	if err != nil {
		t.Fatal(err)
	}
	c.SetTarget(5)
	c.SetInterfaceId(schema.Storage_TypeID)
	c.SetMethodId(0)
	p, err := c.NewParams()
	if err != nil {
		t.Fatal(err)
	}
	args, err := schema.NewStorage_get_Params(p.Segment())
	if err != nil {
		t.Fatal(err)
	}
	if err := args.SetKey("value"); err != nil {
		t.Fatal(err)
	}
	if err := p.SetContent(args.ToPtr()); err != nil {
		t.Fatal(err)
	}
	check("a call", call)

	ret, err := frame.New()
	if err != nil {
		t.Fatal(err)
	}
	defer ret.Message().Release()
	p, err = ret.NewReturn()
	if err != nil {
		t.Fatal(err)
	}
	res, err := schema.NewHost_storage_Results(p.Segment())
	if err != nil {
		t.Fatal(err)
	}
	if err := res.SetStorage(schema.Storage(capnp.ErrorClient(fmt.Errorf("placeholder")))); err != nil {
		t.Fatal(err)
	}
	if err := p.SetContent(res.ToPtr()); err != nil {
		t.Fatal(err)
	}
	err = frame.Describe(p, func(capnp.Client) (frame.Ref, error) { return frame.Ref{Kind: frame.Host, Index: 5}, nil })
	if err != nil {
		t.Fatal(err)
	}
	check("a return", ret)
}

package wasmhost_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/leakcheck"
	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

const counterPkg = "github.com/gadgetd/gadgetd/internal/testcounter"

var compileCache struct {
	sync.Once
	path string
}

// TestMain removes what the tests built and compiled, and fails the run if
// the tests leaked capabilities or goroutines.
func TestMain(m *testing.M) {
	// Not in a process that measures memory (bench_test.go): the leak
	// check keeps a stack trace per capability, which doubled the idle Go
	// instance's resident memory and made a WAT one's 30 times its size.
	if os.Getenv(rssProbeEnv) == "" {
		leakcheck.Install()
	}
	code := m.Run()
	if compileCache.path != "" {
		os.RemoveAll(compileCache.path)
	}
	wasmbuild.RemoveAll()
	os.Exit(leakcheck.Verify(code))
}

func sharedCacheDir(t testing.TB) string {
	compileCache.Do(func() {
		dir, err := os.MkdirTemp("", "gadgetd-wasmhost-test-cache-")
		if err != nil {
			panic(err)
		}
		compileCache.path = dir
	})
	return compileCache.path
}

// sandbox is one Runtime with one gadget of a module, and its test host.
type sandbox struct {
	rt     *wasmhost.Runtime
	mod    *wasmhost.Module
	gadget *wasmhost.Sandbox
	host   *memhost.Host
}

// mustPut writes key straight into the host's storage, as a gadget would.
func mustPut(t *testing.T, h *memhost.Host, key string, value []byte) {
	t.Helper()
	if err := h.Put(key, value); err != nil {
		t.Fatal(err)
	}
}

func newSandbox(t *testing.T, pkg string, opts ...wasmhost.Option) *sandbox {
	t.Helper()
	ctx := context.Background()
	// A shared compilation cache: each test gets its own Runtime without
	// paying a second or so to compile the same guest again.
	opts = append([]wasmhost.Option{wasmhost.WithCompilationCacheDir(sharedCacheDir(t))}, opts...)
	rt, err := wasmhost.New(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Compile(ctx, wasmbuild.ForTest(t, pkg))
	if err != nil {
		t.Fatal(err)
	}
	s := &sandbox{rt: rt, mod: mod, host: memhost.New()}
	s.gadget = rt.NewSandbox(mod, s.host.Client(), wasmhost.WithName("test-gadget"), wasmhost.WithCallScope(s.host.Begin))
	t.Cleanup(func() {
		s.gadget.Close()
		mod.Close(ctx)
		rt.Close(ctx)
	})
	return s
}

// open opens a session as an owner.
func (s *sandbox) open(ctx context.Context) capnp.Client {
	g := s.gadget.Guest()
	defer g.Release()
	f, release := g.Open(ctx, func(p schema.Guest_open_Params) error {
		c, err := p.NewCaller()
		if err != nil {
			return err
		}
		c.SetRole(schema.Role_owner)
		return c.SetUserId("u1")
	})
	defer release()
	return f.Session().AddRef()
}

func TestCounterStateLivesInHostStorage(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, counterPkg)
	c := counterpb.Counter(s.open(ctx))
	defer c.Release()
	for want := int64(1); want <= 3; want++ {
		got, err := countertest.Increment(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("increment = %d, want %d", got, want)
		}
	}
	if v, ok := s.host.Get("value"); !ok || len(v) != 8 || v[7] != 3 {
		t.Fatalf("storage holds %v (found %v), want the counter value 3", v, ok)
	}
}

// listener is a client-side Listener that reads the counter back from inside
// its callback: the re-entrant pattern that must complete.
type listener struct {
	counter counterpb.Counter
	seen    chan [2]int64 // value announced, value read back
}

func (l *listener) Changed(ctx context.Context, call counterpb.Listener_changed) error {
	v := call.Args().Value()
	got, err := countertest.Get(ctx, l.counter)
	if err != nil {
		return err
	}
	l.seen <- [2]int64{v, got}
	return nil
}

func TestListenerCanCallBackIntoTheGadgetWhileItWaits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s := newSandbox(t, counterPkg, wasmhost.WithCallTimeout(3*time.Second))
	c := counterpb.Counter(s.open(ctx))
	defer c.Release()
	l := &listener{counter: c.AddRef(), seen: make(chan [2]int64, 4)}
	defer l.counter.Release()
	lc := counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, l), l, nil))
	f, release := c.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(lc) })
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	defer res.Handle().AddRef().Release() // the subscription lasts while its handle is held
	release()
	lc.Release()

	got, err := countertest.Increment(ctx, c)
	if err != nil {
		t.Fatalf("increment with a re-entrant listener: %v", err)
	}
	select {
	case seen := <-l.seen:
		// The listener's read ran while increment waited, so it sees the
		// new value: the write was committed before the callback.
		if seen != [2]int64{1, 1} || got != 1 {
			t.Fatalf("listener saw %v, increment returned %d; want [1 1] and 1", seen, got)
		}
	default:
		t.Fatal("listener was not called before increment returned")
	}
}

func TestCompileRefusesModulesThatAreNotGuests(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	for _, tc := range []struct {
		name, wasm, want string
	}{
		{"not wasm", "hello, world", "not a WebAssembly module"},
		{"truncated", "\x00asm\x01\x00\x00\x00\x01", "invalid WebAssembly module"},
		{"no exports", "\x00asm\x01\x00\x00\x00", "does not export its memory"},
	} {
		_, err := rt.Compile(ctx, []byte(tc.wasm))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Compile error = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// A module with the required exports, plus extra.
const guestShell = `(module %s
  (memory (export "memory") 1)
  (func (export "_initialize"))
  (func (export "gadgetd_alloc") (param i32) (result i32) i32.const 0)
  (func (export "gadgetd_deliver") (param i32 i32) (result i64) i64.const 0))`

func TestCompileRefusesImportsTheHostCannotSatisfy(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	for _, tc := range []struct{ name, imports, want string }{
		{"wrong host signature", `(import "gadgetd" "exchange" (func (param i32) (result i32)))`, "gadgetd.exchange with signature (i32) -> (i32), want (i32, i32) -> (i32)"},
		{"unknown host function", `(import "gadgetd" "open_socket" (func))`, "unknown host function gadgetd.open_socket"},
		{"unknown WASI function", `(import "wasi_snapshot_preview1" "sock_open" (func (param i32) (result i32)))`, "which WASI preview 1 does not have"},
		{"wrong WASI signature", `(import "wasi_snapshot_preview1" "fd_write" (func (param i32) (result i32)))`, "fd_write with signature"},
		{"foreign module", `(import "env" "abort" (func))`, `only "wasi_snapshot_preview1" and "gadgetd" are provided`},
	} {
		wasm := wat(t, fmt.Sprintf(guestShell, tc.imports))
		_, err := rt.Compile(ctx, wasm)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Compile error = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	// The shell itself is a valid guest, so each refusal above is the
	// import's doing.
	if _, err := rt.Compile(ctx, wat(t, fmt.Sprintf(guestShell, ""))); err != nil {
		t.Fatalf("the minimal guest shell does not compile: %v", err)
	}
	imported := wat(t, `(module (import "env" "memory" (memory 1)) (export "memory" (memory 0))
  (func (export "_initialize"))
  (func (export "gadgetd_alloc") (param i32) (result i32) i32.const 0)
  (func (export "gadgetd_deliver") (param i32 i32) (result i64) i64.const 0))`)
	if _, err := rt.Compile(ctx, imported); err == nil || !strings.Contains(err.Error(), "imports memory env.memory") {
		t.Errorf("imported memory: Compile error = %v, want a refusal", err)
	}
}

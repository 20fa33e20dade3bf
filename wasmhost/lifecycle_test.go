package wasmhost_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/wasmhost"
	"github.com/gadgetd/gadgetd/wasmhost/internal/testguests/benchguest/benchpb"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSessionSurvivesIdleEviction(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, counterPkg, wasmhost.WithIdleTimeout(50*time.Millisecond))
	c := counterpb.Counter(s.open(ctx))
	defer c.Release()
	if v, err := countertest.Increment(ctx, c); err != nil || v != 1 {
		t.Fatalf("increment = %d, %v; want 1", v, err)
	}
	waitFor(t, "idle eviction", func() bool { return !s.gadget.Live() && s.rt.LiveInstances() == 0 })
	// The session was opened on an instance that no longer exists; the
	// host reopens it on a fresh one, and the value comes from storage.
	if v, err := countertest.Increment(ctx, c); err != nil || v != 2 {
		t.Fatalf("increment after eviction = %d, %v; want 2", v, err)
	}
	if !s.gadget.Live() {
		t.Fatal("gadget has no live instance after a call")
	}
}

func TestLiveInstancesAreCappedEvictingLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.WithCompilationCacheDir(sharedCacheDir(t)), wasmhost.WithMaxLiveInstances(2))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	mod, err := rt.Compile(ctx, wasmbuild.ForTest(t, counterPkg))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)

	var gadgets [3]*wasmhost.Sandbox
	var sessions [3]counterpb.Counter
	for i := range gadgets {
		h := memhost.New()
		gadgets[i] = rt.NewSandbox(mod, h.Client(), wasmhost.WithCallScope(h.Begin))
		defer gadgets[i].Close()
		s := &sandbox{rt: rt, mod: mod, gadget: gadgets[i], host: h}
		sessions[i] = counterpb.Counter(s.open(ctx))
		defer sessions[i].Release()
	}
	call := func(i int) {
		t.Helper()
		if _, err := countertest.Get(ctx, sessions[i]); err != nil {
			t.Fatalf("gadget %d: %v", i, err)
		}
	}
	// Opening touched 0, 1, 2 in that order, so 0 was evicted for 2.
	waitFor(t, "eviction of gadget 0", func() bool { return !gadgets[0].Live() })
	call(1) // 1 is now more recent than 2
	call(0) // starting 0 again must evict 2, the least recently used
	waitFor(t, "eviction of gadget 2", func() bool { return !gadgets[2].Live() })
	if !gadgets[0].Live() || !gadgets[1].Live() {
		t.Fatalf("live = %v %v %v; want gadgets 0 and 1 live", gadgets[0].Live(), gadgets[1].Live(), gadgets[2].Live())
	}
	if n := rt.LiveInstances(); n != 2 {
		t.Fatalf("LiveInstances = %d, want 2", n)
	}
	call(2) // and an evicted gadget still answers
}

func TestCompilationCacheSpansRuntimes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wasm := wasmbuild.ForTest(t, counterPkg)
	compile := func() {
		rt, err := wasmhost.New(ctx, wasmhost.WithCompilationCacheDir(dir))
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close(ctx)
		mod, err := rt.Compile(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		mod.Close(ctx)
	}
	// cached lists the cache's files with their identity (count files, not
	// entries: the runtime creates its cache subdirectory whether or not
	// anything is compiled into it).
	cached := func() map[string]string {
		files := map[string]string{}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			id := fmt.Sprintf("%d bytes, modified %d", info.Size(), info.ModTime().UnixNano())
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				id += fmt.Sprintf(", inode %d", st.Ino)
			}
			files[path] = id
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	compile()
	cold := cached()
	if len(cold) == 0 {
		t.Fatal("compilation cache holds no files after a compile")
	}
	// A second runtime finds the code there: a miss would compile again
	// and write an entry of its own. (What it saves is in make bench.)
	compile()
	if warm := cached(); !maps.Equal(cold, warm) {
		t.Fatalf("a second runtime compiled again instead of loading from the cache:\nbefore %v\nafter  %v", cold, warm)
	}
}

func TestRevokedHostCapabilityFailsInsideTheGuest(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, benchPkg)
	c := benchpb.Bench(s.open(ctx))
	defer c.Release()
	hostCalls := func() error {
		f, release := c.HostCalls(ctx, func(p benchpb.Bench_hostCalls_Params) error { p.SetN(1); return nil })
		defer release()
		_, err := f.Struct()
		return err
	}
	// The bench guest keeps the Storage it got on its first call in a
	// global, so the second call uses the same host import index.
	if err := hostCalls(); err != nil {
		t.Fatal(err)
	}
	s.host.RevokeAll(errors.New("gadget removed"))
	err := hostCalls()
	if err == nil || !strings.Contains(err.Error(), "capability revoked") || !strings.Contains(err.Error(), "gadget removed") {
		t.Fatalf("call through a revoked capability: err = %v, want it revoked with the reason", err)
	}
	// The guest survives: only that capability is gone.
	f, release := c.Noop(ctx, nil)
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Fatalf("noop after revocation: %v", err)
	}
}

func TestStaleSessionCanBeReopenedWhileTheGadgetWaits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := newSandbox(t, counterPkg, wasmhost.WithIdleTimeout(50*time.Millisecond), wasmhost.WithCallTimeout(3*time.Second))
	stale := counterpb.Counter(s.open(ctx))
	defer stale.Release()
	if _, err := countertest.Increment(ctx, stale); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "idle eviction", func() bool { return !s.gadget.Live() })

	// A session on the new instance, whose listener reads through the stale
	// session: that call arrives while the new instance waits on the
	// listener, and the stale session must be reopened right there.
	fresh := counterpb.Counter(s.open(ctx))
	defer fresh.Release()
	l := &listener{counter: stale.AddRef(), seen: make(chan [2]int64, 4)}
	defer l.counter.Release()
	lc := counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, l), l, nil))
	f, release := fresh.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(lc) })
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	defer res.Handle().AddRef().Release() // the subscription lasts while its handle is held
	release()
	lc.Release()

	start := time.Now()
	got, err := countertest.Increment(ctx, fresh)
	if err != nil {
		t.Fatalf("increment whose listener uses a stale session: %v (after %v)", err, time.Since(start))
	}
	if seen := <-l.seen; seen != [2]int64{2, 2} || got != 2 {
		t.Fatalf("listener saw %v, increment returned %d; want [2 2] and 2", seen, got)
	}
}

func TestCallFailsWhenItsWritesCannotBeCommitted(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, counterPkg)
	c := counterpb.Counter(s.open(ctx))
	defer c.Release()
	s.host.SetCommitErr(errors.New("disk full"))
	_, err := countertest.Increment(ctx, c)
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "did not happen") {
		t.Fatalf("increment with a failing commit: err = %v, want it to fail naming the commit error", err)
	}
	// Reads commit nothing, so they still work; and the value was not
	// changed by the increment that failed.
	if v, err := countertest.Get(ctx, c); err != nil || v != 0 {
		t.Fatalf("get after the failed increment = %d, %v; want 0", v, err)
	}
}

// Dropping the handle watch returned reaches the guest as a release, whose
// Shutdown ends the subscription there and releases the listener: the
// client's listener is let go at once, not at the next call into the guest.
func TestDroppingAWatchHandleReleasesTheListenerInTheGuest(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, counterPkg)
	c := counterpb.Counter(s.open(ctx))
	defer c.Release()
	released := make(chan struct{})
	lc := counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, &countingListener{heard: make(chan int64, 4)}), nil, closeOnShutdown(released)))
	f, release := c.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(lc) })
	if _, err := f.Struct(); err != nil {
		t.Fatal(err)
	}
	release() // drops the handle
	select {
	case <-released:
	case <-time.After(20 * time.Second):
		t.Fatal("the listener is still held 20 s after its handle was dropped")
	}
}

// closeOnShutdown is a server.Shutdowner that closes its channel.
type closeOnShutdown chan struct{}

func (c closeOnShutdown) Shutdown() { close(c) }

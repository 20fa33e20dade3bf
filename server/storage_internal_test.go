package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/storage"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// openTestServer opens a server on a fresh data directory, with the test
// binary's shared compilation cache (TestCompileCache) unless opts set
// another.
func openTestServer(t *testing.T, opts ...Option) *Server {
	t.Helper()
	opts = append([]Option{WithWasmOptions(wasmhost.WithCompilationCacheDir(TestCompileCache))}, opts...)
	s, err := Open(context.Background(), t.TempDir(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// testStorage returns a storage of gadget id outside any sandbox, and a
// client for it that the test releases.
func testStorage(s *Server, id string) (*gadgetStorage, schema.Storage) {
	s.mu.Lock()
	st := s.newGadgetStorageLocked(id, newLogRing(s.cfg))
	s.mu.Unlock()
	return st, st.capability()
}

func put(ctx context.Context, s schema.Storage, key string, value []byte) error {
	f, release := s.Put(ctx, func(p schema.Storage_put_Params) error {
		if err := p.SetKey(key); err != nil {
			return err
		}
		return p.SetValue(value)
	})
	defer release()
	_, err := f.Struct()
	return err
}

func del(ctx context.Context, s schema.Storage, key string) error {
	f, release := s.Delete(ctx, func(p schema.Storage_delete_Params) error { return p.SetKey(key) })
	defer release()
	_, err := f.Struct()
	return err
}

func getValue(ctx context.Context, s schema.Storage, key string) (string, bool, error) {
	f, release := s.Get(ctx, func(p schema.Storage_get_Params) error { return p.SetKey(key) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		return "", false, err
	}
	v, _ := res.Value()
	return string(v), res.Found(), nil
}

func listKeys(ctx context.Context, s schema.Storage, prefix string) ([]string, error) {
	f, release := s.List(ctx, func(p schema.Storage_list_Params) error { return p.SetPrefix(prefix) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		return nil, err
	}
	entries, _ := res.Entries()
	var keys []string
	for i := 0; i < entries.Len(); i++ {
		k, _ := entries.At(i).Key()
		keys = append(keys, k)
	}
	return keys, nil
}

func stored(t *testing.T, s *Server, gadget, key string) bool {
	t.Helper()
	_, found, err := s.store.Get(context.Background(), gadget, key)
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// The storage semantics are internal/storage's, proven there against the
// bbolt store and the memory backend
// (internal/storage/semantics_test.go:TestEveryBackendHasTheSameSemantics).
// This proves that each of the server's storage options reaches them.
func TestStorageOptionsSetTheLimitsEveryGadgetStorageEnforces(t *testing.T) {
	s := openTestServer(t, WithStorageLimits(8, 16, 40), WithStorageCallLimits(2, 150, 30))
	st, c := testStorage(s, "g")
	defer c.Release()
	ctx := st.guestValues() // the guest's own calls: the call limits apply

	requireContains(t, put(ctx, c, "123456789", nil), "storage key limit: key is 9 bytes, over the limit of 8 bytes")
	requireContains(t, put(ctx, c, "k", make([]byte, 17)), `storage value limit: value for "k" is 17 bytes, over the limit of 16 bytes`)
	for _, k := range []string{"k1", "k2"} {
		if err := put(ctx, c, k, make([]byte, 16)); err != nil {
			t.Fatal(err)
		}
	}
	requireContains(t, put(ctx, c, "k3", make([]byte, 16)), `storage size limit: writing "k3" would bring this gadget's storage to 54 bytes, over the limit of 40 bytes`)
	// Each entry is 18 bytes: a list budget of 30 answers with one.
	if keys, err := listKeys(ctx, c, ""); err != nil || strings.Join(keys, ",") != "k1" {
		t.Fatalf("list = %v, %v; want k1 alone within 30 bytes", keys, err)
	}

	end := st.begin()
	for _, k := range []string{"x", "y"} {
		if err := del(ctx, c, k); err != nil {
			t.Fatal(err)
		}
	}
	requireContains(t, del(ctx, c, "z"), "storage call limit: this call has changed 2 keys, the limit is 2")
	if err := end(nil); err != nil {
		t.Fatal(err)
	}
	// Each put of 2 + 16 bytes holds 82 bytes with the write's overhead.
	end = st.begin()
	defer end(nil)
	if err := put(ctx, c, "k1", make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	requireContains(t, put(ctx, c, "k2", make([]byte, 16)), "storage call limit: this call's buffered writes would hold 164 bytes, the limit is 150")
}

// A guest's storage calls are in-process calls (wasmhost makes them with
// SendCall), which the Storage answers at once on the caller's goroutine,
// without go-capnp's queue: the answer is resolved when SendCall returns.
// That fast path must still reach the gadget's removal: once its storage is
// closed, the next call fails at once with storage.ErrRemoved.
func TestInProcessStorageCallsAreAnsweredAtOnceAndFailOnceTheGadgetIsRemoved(t *testing.T) {
	s := openTestServer(t)
	st, c := testStorage(s, "g")
	defer c.Release()
	ctx := context.Background()
	if err := put(ctx, c, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	get := func() (schema.Storage_get_Results, error) {
		t.Helper()
		f, release := c.Get(ctx, func(p schema.Storage_get_Params) error { return p.SetKey("k") })
		t.Cleanup(release)
		select {
		case <-f.Done():
		default:
			t.Fatal("an in-process storage call was still in flight when SendCall returned")
		}
		return f.Struct()
	}
	if res, err := get(); err != nil || !res.Found() {
		t.Fatalf("get before removal = found %v, %v; want the stored value", res.Found(), err)
	}
	st.close()
	if _, err := get(); !errors.Is(err, storage.ErrRemoved) {
		t.Fatalf("get after the gadget's storage was closed: err = %v, want %v", err, storage.ErrRemoved)
	}
}

// The in-process fast path serves the guest's own call (its context
// carries the gadget's guest mark, as wasmhost gives it) in the call scope
// that is open: the writes commit when the call succeeds and vanish when it
// fails.
func TestInProcessStorageWritesCommitOrRollBackWithTheCall(t *testing.T) {
	s := openTestServer(t)
	st, c := testStorage(s, "g")
	defer c.Release()
	ctx := st.guestValues()

	end := st.begin()
	if err := put(ctx, c, "failed", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if stored(t, s, "g", "failed") {
		t.Fatal("a write was committed before its call ended")
	}
	if err := end(errors.New("the guest trapped")); err != nil {
		t.Fatal(err)
	}
	if stored(t, s, "g", "failed") {
		t.Fatal("the write of a failed call was committed")
	}

	end = st.begin()
	if err := put(ctx, c, "done", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := end(nil); err != nil {
		t.Fatal(err)
	}
	if !stored(t, s, "g", "done") {
		t.Fatal("the write of a successful call was not committed")
	}
}

// A call whose writes cannot be committed (the store's file is closed here,
// as a failing disk would refuse it) fails, and the failure is logged for
// the operator and in the gadget's own log.
func TestAFailedCommitFailsTheCallAndIsLogged(t *testing.T) {
	var operator bytes.Buffer
	s := openTestServer(t, WithLogger(slog.New(slog.NewTextHandler(&operator, nil))))
	st, c := testStorage(s, "g")
	defer c.Release()
	end := st.begin()
	if err := put(st.guestValues(), c, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := s.store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := end(nil); err == nil {
		t.Fatal("a call whose commit failed was reported as a success")
	}
	if !strings.Contains(operator.String(), "committing gadget storage failed") {
		t.Fatalf("the operator's log has no line about the failed commit: %q", operator.String())
	}
	lines := st.logs.newest(10)
	if len(lines) != 1 || !strings.Contains(lines[0].message, "storage commit failed; the call that made these writes failed") {
		t.Fatalf("the gadget's log = %v, want the failed commit", lines)
	}
}

func TestFailedGuestCallsDiscardTheirStorageWrites(t *testing.T) {
	s := openTestServer(t)
	// Compiling two guests without a cache, under -race on a busy 2-core
	// machine, took more than a minute; this bound only proves no hang.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	counter := blueprinttest.Bundle(t, blueprinttest.TestCounter)
	if _, err := s.InstallBuiltin(ctx, counter); err != nil {
		t.Fatal(err)
	}
	hostile := store.BlueprintRecord{
		Name: "hostile", Version: "1", SessionInterface: schema.Storage_TypeID,
		Wasm:        blueprinttest.Wasm(t, "wasmhost/internal/testguests/hostile"),
		SchemaNodes: blueprinttest.Schema(t, "schema", "gadget.capnp"),
	}
	if _, err := s.install(ctx, hostile, true); err != nil {
		t.Fatal(err)
	}
	user, err := s.store.CreateUser(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	ws := &workspace{s: s, user: user}
	wsClient := schema.Workspace(capserver.New(schema.Workspace_Methods(nil, ws), ws, nil))
	defer wsClient.Release()
	openSession := func(blueprint string) (gadgetID string, session schema.Storage) {
		cf, release := wsClient.Create(ctx, func(p schema.Workspace_create_Params) error { return p.SetBlueprint(blueprint) })
		t.Cleanup(release)
		res, err := cf.Struct()
		if err != nil {
			t.Fatal(err)
		}
		info, _ := res.Info()
		id, _ := info.Id()
		of, release2 := res.Gadget().Open(ctx, nil)
		t.Cleanup(release2)
		return id, schema.Storage(of.Session())
	}

	// Control: a successful call commits (the counter stores "value").
	counterID, counterSession := openSession("counter")
	inc, release := counterpb.Counter(counterSession).Increment(ctx, nil)
	defer release()
	if _, err := inc.Struct(); err != nil {
		t.Fatal(err)
	}
	if !stored(t, s, counterID, "value") {
		t.Fatal("the counter's successful increment was not committed")
	}

	id, session := openSession("hostile")
	for _, cmd := range []string{"put-then-fail", "put-then-panic"} {
		if _, _, err := getValue(ctx, session, cmd); err == nil {
			t.Fatalf("%s succeeded", cmd)
		}
		if stored(t, s, id, "k1") {
			t.Fatalf("%s: the write of a failed call was committed", cmd)
		}
		_, session = openSession("hostile") // a panic kills the instance and its sessions
	}
}

func TestLogRingKeepsTheNewestLinesAndCutsLongOnes(t *testing.T) {
	cfg := defaultConfig()
	WithLogLimits(3, 8)(&cfg)
	r := newLogRing(cfg)
	for _, m := range []string{"one", "two", "three", "four", "héééééé"} {
		r.add(schema.LogLevel_info, m)
	}
	got := r.newest(10)
	var msgs []string
	for _, l := range got {
		msgs = append(msgs, l.message)
	}
	// "héééééé" is 13 bytes; cut at 8 it would split an "é", so it is cut at 7.
	if strings.Join(msgs, "|") != "three|four|hééé…" {
		t.Fatalf("lines = %q", msgs)
	}
	if last := r.newest(1); len(last) != 1 || last[0].message != "hééé…" {
		t.Fatalf("newest(1) = %v", last)
	}
}

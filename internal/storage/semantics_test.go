package storage_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/leakcheck"
	"github.com/gadgetd/gadgetd/internal/storage"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

// TestMain fails the run if the tests leak capabilities or goroutines.
func TestMain(m *testing.M) { leakcheck.Main(m) }

// backends are the Stores every case runs against: the one tests use and
// the server's bbolt file.
var backends = []struct {
	name string
	open func(t *testing.T) storage.Store
}{
	{"memory", func(*testing.T) storage.Store { return storage.NewMemory() }},
	{"bbolt", func(t *testing.T) storage.Store {
		s, err := store.Open(filepath.Join(t.TempDir(), "db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return store.GadgetData(s, "g")
	}},
}

// recorder is a Store that keeps every batch committed through it, and fails
// commits with failWith while it is set, as a full disk would.
type recorder struct {
	storage.Store

	mu       sync.Mutex
	commits  [][]storage.Write
	failWith error
}

func (r *recorder) Commit(ctx context.Context, writes []storage.Write, maxSize int64) error {
	r.mu.Lock()
	fail := r.failWith
	r.mu.Unlock()
	if fail != nil {
		return fail
	}
	if err := r.Store.Commit(ctx, writes, maxSize); err != nil {
		return err
	}
	r.mu.Lock()
	r.commits = append(r.commits, slices.Clone(writes))
	r.mu.Unlock()
	return nil
}

func (r *recorder) committed() [][]storage.Write {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.commits)
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	r.failWith = err
	r.mu.Unlock()
}

// env is one case's storage over one backend.
type env struct {
	t     *testing.T
	ctx   context.Context
	store *recorder
	data  *storage.Data
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// seed commits key=value for every key straight to the backend, in one
// batch.
func (e *env) seed(keys ...string) {
	e.t.Helper()
	var ws []storage.Write
	for _, k := range keys {
		ws = append(ws, storage.Write{Key: k, Value: []byte(k)})
	}
	e.must(e.store.Store.Commit(e.ctx, ws, 1<<30))
}

// stored reads key from the backend, past any transaction.
func (e *env) stored(key string) (string, bool) {
	e.t.Helper()
	v, found, err := e.store.Get(e.ctx, key)
	e.must(err)
	return string(v), found
}

func (e *env) get(ctx context.Context, key string) (string, bool) {
	e.t.Helper()
	v, found, err := e.data.Get(ctx, key)
	e.must(err)
	return string(v), found
}

// keys lists the keys under prefix after after, one answer.
func (e *env) keys(ctx context.Context, prefix, after string, limit int) string {
	e.t.Helper()
	entries, err := e.data.List(ctx, prefix, after, limit)
	e.must(err)
	var out []string
	for _, en := range entries {
		out = append(out, en.Key)
	}
	return strings.Join(out, ",")
}

// listAll pages through everything with after, checking each answer's
// size against budget.
func (e *env) listAll(budget int64) string {
	e.t.Helper()
	var got []string
	for after := ""; ; {
		entries, err := e.data.List(e.ctx, "", after, 0)
		e.must(err)
		if len(entries) == 0 {
			return strings.Join(got, ",")
		}
		var size int64
		for _, en := range entries {
			size += storage.EntrySize(en.Key, en.Value)
			got = append(got, en.Key)
		}
		if size > budget {
			e.t.Fatalf("a list answer held %d bytes of keys and values, over the budget of %d", size, budget)
		}
		after = got[len(got)-1]
	}
}

func wantErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Fatalf("%s: err = %v, want %q", what, err, want)
	}
}

// semantics is the behaviour of a gadget's storage, which must not depend on
// the backend.
var semantics = []struct {
	name   string
	limits storage.Limits
	run    func(e *env)
}{
	{"writes past a limit fail with an error naming it and change nothing",
		storage.Limits{MaxKeyBytes: 8, MaxValueBytes: 16, MaxTotalBytes: 40},
		func(e *env) {
			wantErr(e.t, "empty key", e.data.Put(e.ctx, "", nil), "storage key must not be empty")
			wantErr(e.t, "delete of an empty key", e.data.Delete(e.ctx, ""), "storage key must not be empty")
			wantErr(e.t, "long key", e.data.Put(e.ctx, "123456789", nil), "storage key limit: key is 9 bytes, over the limit of 8 bytes")
			wantErr(e.t, "delete of a long key", e.data.Delete(e.ctx, "123456789"), "storage key limit: key is 9 bytes, over the limit of 8 bytes")
			wantErr(e.t, "large value", e.data.Put(e.ctx, "k", make([]byte, 17)), `storage value limit: value for "k" is 17 bytes, over the limit of 16 bytes`)
			// Outside a call scope each write is its own transaction.
			e.must(e.data.Put(e.ctx, "k1", make([]byte, 16)))
			e.must(e.data.Put(e.ctx, "k2", make([]byte, 16)))
			wantErr(e.t, "third put", e.data.Put(e.ctx, "k3", make([]byte, 16)),
				`storage size limit: writing "k3" would bring this gadget's storage to 54 bytes, over the limit of 40 bytes`)
			// Overwriting within the limit is fine; so is deleting.
			e.must(e.data.Put(e.ctx, "k2", make([]byte, 10)))
			e.must(e.data.Delete(e.ctx, "k1"))
			if _, found := e.stored("k1"); found {
				e.t.Fatal("an unscoped delete was not applied at once")
			}
			if _, found := e.stored("k3"); found {
				e.t.Fatal("a write past the size limit was applied")
			}
			if v, _ := e.stored("k2"); len(v) != 10 {
				e.t.Fatalf("k2 holds %d bytes, want the 10 of the overwrite", len(v))
			}
		}},

	{"inside a call the size limit counts the call's own writes, and a refused write keeps the rest",
		storage.Limits{MaxKeyBytes: 4, MaxValueBytes: 8, MaxTotalBytes: 20},
		func(e *env) {
			end := e.data.Begin()
			e.must(e.data.Put(e.ctx, "k1", []byte("12345678"))) // 10 bytes
			e.must(e.data.Put(e.ctx, "k2", []byte("12345678"))) // 20 bytes
			wantErr(e.t, "put past the total", e.data.Put(e.ctx, "k3", []byte("1")),
				`storage size limit: writing "k3" would bring this gadget's storage to 23 bytes, over the limit of 20 bytes`)
			// Overwriting with less makes room.
			e.must(e.data.Put(e.ctx, "k2", []byte("1")))
			e.must(e.data.Put(e.ctx, "k3", []byte("1")))
			e.must(end(nil))
			if size, err := e.store.Size(e.ctx); err != nil || size != 10+3+3 {
				e.t.Fatalf("size = %d, %v; want 16", size, err)
			}
		}},

	{"a call reads its own writes, commits them on success and discards them on failure",
		storage.Limits{},
		func(e *env) {
			e.seed("n/1", "n/2", "gone")
			end := e.data.Begin()
			e.must(e.data.Put(e.ctx, "a", []byte("1")))
			e.must(e.data.Delete(e.ctx, "n/1"))
			e.must(e.data.Put(e.ctx, "n/3", []byte("3")))
			if v, found := e.get(e.ctx, "a"); !found || v != "1" {
				e.t.Fatal("a call does not read its own buffered write")
			}
			if _, found := e.get(e.ctx, "n/1"); found {
				e.t.Fatal("a call still reads a key it deleted")
			}
			if got := e.keys(e.ctx, "n/", "", 0); got != "n/2,n/3" {
				e.t.Fatalf("list inside the call = %v, want the buffered delete and put applied", got)
			}
			if _, found := e.stored("a"); found {
				e.t.Fatal("a buffered write reached the store before the call ended")
			}
			e.must(end(errors.New("the guest trapped")))
			if _, found := e.stored("a"); found {
				e.t.Fatal("a failed call's put was applied")
			}
			if _, found := e.stored("n/1"); !found {
				e.t.Fatal("a failed call's delete was applied")
			}

			end = e.data.Begin()
			e.must(e.data.Put(e.ctx, "a", []byte("2")))
			e.must(e.data.Delete(e.ctx, "gone"))
			e.must(end(nil))
			if v, _ := e.stored("a"); v != "2" {
				e.t.Fatal("a successful call's put was not committed")
			}
			if _, found := e.stored("gone"); found {
				e.t.Fatal("a successful call's delete was not committed")
			}

			// A call that only reads commits nothing.
			commits := len(e.store.committed())
			end = e.data.Begin()
			e.get(e.ctx, "a")
			e.keys(e.ctx, "", "", 0)
			e.must(end(nil))
			if n := len(e.store.committed()); n != commits {
				e.t.Fatalf("a read-only call committed %d batches", n-commits)
			}
		}},

	{"a call's writes commit as one batch, the newest write per key, in first-write order",
		storage.Limits{},
		func(e *env) {
			e.seed("c")
			end := e.data.Begin()
			e.must(e.data.Put(e.ctx, "b", []byte("1")))
			e.must(e.data.Put(e.ctx, "a", []byte("1")))
			want := "b=2 -a"
			for i := 9; i > 0; i-- { // neither key nor insertion order of a map
				k := fmt.Sprintf("z%d", i)
				e.must(e.data.Put(e.ctx, k, []byte("v")))
				want += " " + k + "=v"
			}
			e.must(e.data.Put(e.ctx, "b", []byte("2")))
			e.must(e.data.Delete(e.ctx, "c"))
			e.must(e.data.Delete(e.ctx, "a"))
			e.must(end(nil))
			want += " -c"
			commits := e.store.committed()
			if len(commits) != 1 {
				e.t.Fatalf("the call committed %d batches, want 1", len(commits))
			}
			var got []string
			for _, w := range commits[0] {
				if w.Delete {
					got = append(got, "-"+w.Key)
				} else {
					got = append(got, w.Key+"="+string(w.Value))
				}
			}
			if strings.Join(got, " ") != want {
				e.t.Fatalf("the call committed %q, want %q", strings.Join(got, " "), want)
			}
		}},

	{"a commit that fails fails the call and keeps none of its writes",
		storage.Limits{},
		func(e *env) {
			e.store.fail(errors.New("disk full"))
			end := e.data.Begin()
			e.must(e.data.Put(e.ctx, "a", []byte("1")))
			wantErr(e.t, "ending the call", end(nil), "disk full")
			if _, found := e.stored("a"); found {
				e.t.Fatal("a failed commit kept its write")
			}
			// Reads commit nothing, so they still succeed.
			end = e.data.Begin()
			if _, found := e.get(e.ctx, "a"); found {
				e.t.Fatal("the next call reads the lost write")
			}
			e.must(end(nil))
			e.store.fail(nil)
			end = e.data.Begin()
			e.must(e.data.Put(e.ctx, "a", []byte("1")))
			e.must(end(nil))
			if v, _ := e.stored("a"); v != "1" {
				e.t.Fatal("a commit after the disk recovered was lost")
			}
		}},

	// Without the per-call limits, one call could buffer any number of
	// deletes of keys that do not exist: they change no data size, so the
	// size limit never saw them (335,872 of them held 420 MB).
	{"every buffered write counts against the call limits",
		storage.Limits{MaxCallWrites: 100, MaxCallBytes: 1 << 20},
		func(e *env) {
			end := e.data.Begin()
			e.must(e.data.Put(e.ctx, "kept", []byte("v")))
			for i := range 99 {
				e.must(e.data.Delete(e.ctx, fmt.Sprintf("absent-%d", i)))
			}
			wantErr(e.t, "the 101st write", e.data.Delete(e.ctx, "absent-one-too-many"),
				"storage call limit: this call has changed 100 keys, the limit is 100; split the work over several calls")
			// Writing a key the call already changed holds nothing more.
			e.must(e.data.Delete(e.ctx, "absent-7"))
			// The rest of the transaction is kept.
			e.must(end(nil))
			if _, found := e.stored("kept"); !found {
				e.t.Fatal("the call's writes before the limit were not committed")
			}
		}},

	{"a call's buffered bytes are bounded, deletes included",
		storage.Limits{MaxCallWrites: 1000, MaxCallBytes: 10_000},
		func(e *env) {
			end := e.data.Begin()
			defer end(nil)
			// Each delete of a 500-byte key holds its key and WriteOverhead.
			fits := 10_000 / (500 + storage.WriteOverhead)
			for i := range fits {
				e.must(e.data.Delete(e.ctx, fmt.Sprintf("%0500d", i)))
			}
			wantErr(e.t, "one delete too many", e.data.Delete(e.ctx, fmt.Sprintf("%0500d", fits)),
				fmt.Sprintf("storage call limit: this call's buffered writes would hold %d bytes, the limit is 10000; split the work over several calls", (fits+1)*(500+storage.WriteOverhead)))
			// Replacing a buffered write with a smaller one always fits.
			e.must(e.data.Delete(e.ctx, fmt.Sprintf("%0500d", 0)))
		}},

	// Without the byte budget, Storage.list read up to 1000 values of up to
	// 1 MiB each into host memory before the frame limit refused the answer.
	{"list answers within its byte budget and pages through everything",
		storage.Limits{MaxListBytes: 3000},
		func(e *env) {
			var all []string
			for i := range 10 {
				k := fmt.Sprintf("k%d", i)
				all = append(all, k)
				e.must(e.data.Put(e.ctx, k, make([]byte, 1000)))
			}
			if got := e.listAll(3000); got != strings.Join(all, ",") {
				e.t.Fatalf("paging read %v, want %v", got, all)
			}
			// Inside a call: deletes hiding every entry of the first stored
			// page must not end the listing early, and a buffered put past the
			// page must not skip the stored keys before it.
			end := e.data.Begin()
			defer end(nil)
			for _, k := range []string{"k0", "k1", "k2", "k3"} {
				e.must(e.data.Delete(e.ctx, k))
			}
			e.must(e.data.Put(e.ctx, "k99", []byte("x")))
			if got, want := e.listAll(3000), strings.Join(append(all[4:], "k99"), ","); got != want {
				e.t.Fatalf("paging inside a call read %v, want %v", got, want)
			}
		}},

	{"an entry larger than the list budget is still listed, alone",
		storage.Limits{MaxListBytes: 10},
		func(e *env) {
			e.seed("first-long-key", "second-long-key")
			if got := e.keys(e.ctx, "", "", 0); got != "first-long-key" {
				e.t.Fatalf("list = %q, want the first entry alone", got)
			}
		}},

	{"list honours prefix, after and limit, and caps the limit",
		storage.Limits{},
		func(e *env) {
			e.seed("p/1", "p/2", "p/3", "q/1", "p")
			end := e.data.Begin()
			defer end(nil)
			e.must(e.data.Delete(e.ctx, "p/2"))
			e.must(e.data.Put(e.ctx, "p/0", []byte("new")))
			e.must(e.data.Put(e.ctx, "q/0", []byte("new")))
			if got := e.keys(e.ctx, "p/", "", 0); got != "p/0,p/1,p/3" {
				e.t.Fatalf("list p/ = %q", got)
			}
			if got := e.keys(e.ctx, "p/", "p/0", 1); got != "p/1" {
				e.t.Fatalf("list p/ after p/0 limit 1 = %q", got)
			}
			var many []string
			for i := range storage.ListLimit + 5 {
				many = append(many, fmt.Sprintf("m/%04d", i))
			}
			e.seed(many...)
			for _, limit := range []int{0, storage.ListLimit + 1, 1 << 30} {
				if got := e.keys(e.ctx, "m/", "", limit); got != strings.Join(many[:storage.ListLimit], ",") {
					e.t.Fatalf("list with limit %d answered %d keys, want the first %d", limit, strings.Count(got, ",")+1, storage.ListLimit)
				}
			}
		}},

	// A client calling a Storage the gadget delegated to it must neither see
	// the guest's unsaved writes nor have its own go with the guest's call.
	{"an operation in its own transaction neither sees nor joins the open call",
		storage.Limits{},
		func(e *env) {
			own := storage.OwnTransaction(e.ctx)
			end := e.data.Begin()
			e.must(e.data.Put(e.ctx, "guest-key", []byte("unsaved")))
			if _, found := e.get(own, "guest-key"); found {
				e.t.Fatal("an own transaction read the open call's unsaved write")
			}
			if got := e.keys(own, "", "", 0); got != "" {
				e.t.Fatalf("an own transaction listed %q while only the call's unsaved write exists", got)
			}
			e.must(e.data.Put(own, "own-key", []byte("saved")))
			if _, found := e.stored("own-key"); !found {
				e.t.Fatal("an own transaction's write waited for the open call")
			}
			e.must(end(errors.New("the guest trapped")))
			if _, found := e.stored("guest-key"); found {
				e.t.Fatal("the failed call's write was kept")
			}
			if _, found := e.stored("own-key"); !found {
				e.t.Fatal("the own transaction's write went with the failed call")
			}
		}},

	{"a write in its own transaction counts toward the open call's size limit",
		storage.Limits{MaxTotalBytes: 40},
		func(e *env) {
			end := e.data.Begin()
			e.must(e.data.Put(e.ctx, "k1", make([]byte, 16))) // 18 bytes, buffered
			e.must(e.data.Put(storage.OwnTransaction(e.ctx), "k2", make([]byte, 16)))
			// 54 bytes with the other's write: refused now, not at commit.
			wantErr(e.t, "the call's second put", e.data.Put(e.ctx, "k3", make([]byte, 16)),
				`storage size limit: writing "k3" would bring this gadget's storage to 54 bytes, over the limit of 40 bytes`)
			e.must(end(nil))
			if _, found := e.stored("k1"); !found {
				e.t.Fatal("the call's write within the limit was not committed")
			}
		}},

	{"a closed storage refuses everything, and the open call's writes",
		storage.Limits{},
		func(e *env) {
			end := e.data.Begin()
			e.must(e.data.Put(e.ctx, "a", []byte("1")))
			e.data.Close()
			if err := end(nil); !errors.Is(err, storage.ErrRemoved) {
				e.t.Fatalf("end after Close = %v, want ErrRemoved", err)
			}
			if _, found := e.stored("a"); found {
				e.t.Fatal("the open call's write was committed after Close")
			}
			_, _, getErr := e.data.Get(e.ctx, "a")
			_, listErr := e.data.List(e.ctx, "", "", 0)
			for what, err := range map[string]error{
				"get": getErr, "list": listErr,
				"put": e.data.Put(e.ctx, "a", nil), "delete": e.data.Delete(e.ctx, "a"),
			} {
				if !errors.Is(err, storage.ErrRemoved) || err.Error() != "gadget was removed" {
					e.t.Errorf("%s after Close = %v, want %q", what, err, "gadget was removed")
				}
			}
		}},

	{"the backend commits atomically and keeps its quota",
		storage.Limits{},
		func(e *env) {
			s := e.store.Store
			e.must(s.Commit(e.ctx, []storage.Write{{Key: "a", Value: []byte("12345")}, {Key: "empty"}}, 100))
			if size, err := s.Size(e.ctx); err != nil || size != 6+5 {
				e.t.Fatalf("size = %d, %v; want 11", size, err)
			}
			err := s.Commit(e.ctx, []storage.Write{{Key: "b", Value: []byte("x")}, {Key: "c", Value: make([]byte, 100)}}, 100)
			if !errors.Is(err, storage.ErrQuota) || err.Error() != "storage quota exceeded: 114 bytes would exceed the limit of 100" {
				e.t.Fatalf("over quota: %v", err)
			}
			if _, found := e.stored("b"); found {
				e.t.Fatal("a refused commit applied part of its writes")
			}
			if v, found, err := s.Get(e.ctx, "empty"); err != nil || !found || v == nil || len(v) != 0 {
				e.t.Fatalf("empty value: %q found=%v, %v; want a non-nil empty value", v, found, err)
			}
			// Within one batch a later write to a key replaces the earlier.
			e.must(s.Commit(e.ctx, []storage.Write{{Key: "d", Value: []byte("1")}, {Key: "d", Delete: true}, {Key: "d", Value: []byte("22")}}, 100))
			if v, _ := e.stored("d"); v != "22" {
				e.t.Fatalf("d = %q, want the batch's last write", v)
			}
			// Shrinking is allowed even over the quota (an operator may lower it).
			e.must(s.Commit(e.ctx, []storage.Write{{Key: "a", Delete: true}}, 1))
			if size, _ := s.Size(e.ctx); size != 5+3 {
				e.t.Fatalf("size after delete = %d, want 8", size)
			}
			page, more, err := s.List(e.ctx, "", "", 1, 1<<20)
			if err != nil || len(page) != 1 || page[0].Key != "d" || !more {
				e.t.Fatalf("List(limit 1) = %v, more=%v, %v", page, more, err)
			}
		}},

	{"the Storage capability serves the same semantics",
		storage.Limits{MaxKeyBytes: 8},
		func(e *env) {
			c := schema.Storage(capserver.New(e.data.Methods(), nil, nil))
			defer c.Release()
			put := func(key, value string) error {
				f, release := c.Put(e.ctx, func(p schema.Storage_put_Params) error {
					if err := p.SetKey(key); err != nil {
						return err
					}
					return p.SetValue([]byte(value))
				})
				defer release()
				_, err := f.Struct()
				return err
			}
			get := func(key string) (string, bool) {
				f, release := c.Get(e.ctx, func(p schema.Storage_get_Params) error { return p.SetKey(key) })
				defer release()
				res, err := f.Struct()
				e.must(err)
				v, _ := res.Value()
				return string(v), res.Found()
			}
			end := e.data.Begin()
			e.must(put("a", "1"))
			e.must(put("b", "2"))
			f, release := c.Delete(e.ctx, func(p schema.Storage_delete_Params) error { return p.SetKey("b") })
			if _, err := f.Struct(); err != nil {
				e.t.Fatal(err)
			}
			release()
			if err := put("123456789", ""); err == nil || !strings.Contains(err.Error(), "storage key limit: key is 9 bytes, over the limit of 8 bytes") {
				e.t.Fatalf("put of a long key over Cap'n Proto = %v", err)
			}
			if v, found := get("a"); !found || v != "1" {
				e.t.Fatalf("get a = %q, %v", v, found)
			}
			lf, release := c.List(e.ctx, func(p schema.Storage_list_Params) error { return nil })
			res, err := lf.Struct()
			e.must(err)
			entries, _ := res.Entries()
			if entries.Len() != 1 {
				e.t.Fatalf("list answered %d entries, want a alone", entries.Len())
			}
			release()
			e.must(end(nil))
			if v, _ := e.stored("a"); v != "1" {
				e.t.Fatal("a write through the capability was not committed with the call")
			}
		}},
}

// TestEveryBackendHasTheSameSemantics runs each case of semantics against
// each backend: one implementation, proven over the store tests use and the
// one the server uses.
func TestEveryBackendHasTheSameSemantics(t *testing.T) {
	for _, b := range backends {
		for _, c := range semantics {
			t.Run(b.name+"/"+c.name, func(t *testing.T) {
				r := &recorder{Store: b.open(t)}
				c.run(&env{t: t, ctx: context.Background(), store: r, data: storage.New(r, c.limits)})
			})
		}
	}
}

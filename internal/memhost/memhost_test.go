package memhost_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/schema"
)

// storage gets a Storage capability from h as a gadget would.
func storage(t *testing.T, h *memhost.Host) schema.Storage {
	t.Helper()
	c := h.Client()
	t.Cleanup(c.Release)
	f, release := c.Storage(context.Background(), nil)
	defer release()
	s := f.Storage().AddRef()
	t.Cleanup(s.Release)
	return s
}

func put(s schema.Storage, k, v string) error {
	f, release := s.Put(context.Background(), func(p schema.Storage_put_Params) error {
		if err := p.SetKey(k); err != nil {
			return err
		}
		return p.SetValue([]byte(v))
	})
	defer release()
	_, err := f.Struct()
	return err
}

func del(s schema.Storage, k string) error {
	f, release := s.Delete(context.Background(), func(p schema.Storage_delete_Params) error { return p.SetKey(k) })
	defer release()
	_, err := f.Struct()
	return err
}

func get(t *testing.T, s schema.Storage, k string) (string, bool) {
	t.Helper()
	f, release := s.Get(context.Background(), func(p schema.Storage_get_Params) error { return p.SetKey(k) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("get %q: %v", k, err)
	}
	v, _ := res.Value()
	return string(v), res.Found()
}

func list(t *testing.T, s schema.Storage, prefix, after string, limit uint32) string {
	t.Helper()
	f, release := s.List(context.Background(), func(p schema.Storage_list_Params) error {
		p.SetLimit(limit)
		if err := p.SetAfter(after); err != nil {
			return err
		}
		return p.SetPrefix(prefix)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	es, _ := res.Entries()
	var out []string
	for i := 0; i < es.Len(); i++ {
		k, _ := es.At(i).Key()
		v, _ := es.At(i).Value()
		out = append(out, k+"="+string(v))
	}
	return strings.Join(out, " ")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCallWritesCommitOnSuccessAndVanishOnFailure(t *testing.T) {
	h := memhost.New()
	s := storage(t, h)
	must(t, h.Put("a", []byte("0")))
	must(t, h.Put("gone", []byte("x")))

	end := h.Begin()
	must(t, put(s, "a", "1"))
	must(t, put(s, "b", "2"))
	must(t, del(s, "gone"))
	// The call sees its own writes; the committed data does not yet.
	if v, ok := get(t, s, "a"); !ok || v != "1" {
		t.Fatalf("get a in the call = %q, %v", v, ok)
	}
	if _, ok := get(t, s, "gone"); ok {
		t.Fatal("a deleted key is still visible to the call")
	}
	if got := list(t, s, "", "", 0); got != "a=1 b=2" {
		t.Fatalf("list in the call = %q", got)
	}
	if c := h.Committed(); string(c["a"]) != "0" || c["b"] != nil || string(c["gone"]) != "x" {
		t.Fatalf("committed during the call = %q", c)
	}
	must(t, end(nil))
	if c := h.Committed(); len(c) != 2 || string(c["a"]) != "1" || string(c["b"]) != "2" || h.Commits() != 1 {
		t.Fatalf("committed = %q, %d commits", c, h.Commits())
	}
	if h.Size() != len("a1b2") {
		t.Fatalf("size = %d", h.Size())
	}

	end = h.Begin()
	must(t, put(s, "c", "3"))
	must(t, end(errors.New("call failed")))
	if _, ok := h.Get("c"); ok || h.Commits() != 1 {
		t.Fatal("a failed call's write was kept")
	}

	// A call without writes commits nothing.
	end = h.Begin()
	get(t, s, "a")
	must(t, end(nil))
	if h.Commits() != 1 {
		t.Fatalf("%d commits after a read-only call, want 1", h.Commits())
	}
}

func TestCommitFailure(t *testing.T) {
	h := memhost.New()
	s := storage(t, h)
	h.SetCommitErr(errors.New("disk full"))
	end := h.Begin()
	must(t, put(s, "a", "1"))
	if err := end(nil); err == nil || err.Error() != "disk full" {
		t.Fatalf("end = %v, want disk full", err)
	}
	if _, ok := h.Get("a"); ok {
		t.Fatal("a failed commit kept its write")
	}
	// Reads commit nothing, so they still succeed.
	end = h.Begin()
	get(t, s, "a")
	must(t, end(nil))
	h.SetCommitErr(nil)
	end = h.Begin()
	must(t, put(s, "a", "1"))
	must(t, end(nil))
	if v, ok := h.Get("a"); !ok || string(v) != "1" {
		t.Fatal("commit after clearing the error failed")
	}
}

func TestListPrefixAfterLimitAndCount(t *testing.T) {
	h := memhost.New()
	s := storage(t, h)
	for _, k := range []string{"p/1", "p/2", "p/3", "q/1"} {
		must(t, h.Put(k, []byte(k)))
	}
	end := h.Begin()
	defer end(nil)
	must(t, del(s, "p/2"))
	must(t, put(s, "p/0", "new"))
	if got := list(t, s, "p/", "", 0); got != "p/0=new p/1=p/1 p/3=p/3" {
		t.Fatalf("list p/ = %q", got)
	}
	if got := list(t, s, "p/", "p/0", 1); got != "p/1=p/1" {
		t.Fatalf("list p/ after p/0 limit 1 = %q", got)
	}
	if n := h.ListedEntries(); n != 4 {
		t.Fatalf("listed %d entries, want 4", n)
	}
}

func TestLimits(t *testing.T) {
	h := memhost.New(memhost.WithMaxKeyBytes(4), memhost.WithMaxValueBytes(8), memhost.WithMaxTotalBytes(20))
	s := storage(t, h)
	for _, c := range []struct {
		err  error
		want string
	}{
		{put(s, "", "v"), "must not be empty"},
		{put(s, "toolong", "v"), "key is 7 bytes, over the limit of 4"},
		{put(s, "k", "123456789"), "value is 9 bytes, over the limit of 8"},
		{h.Put("toolong", nil), "key is 7 bytes"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("err = %v, want %q", c.err, c.want)
		}
	}
	end := h.Begin()
	must(t, put(s, "k1", "12345678")) // 10 bytes
	must(t, put(s, "k2", "12345678")) // 20 bytes
	err := put(s, "k3", "1")
	if err == nil || !strings.Contains(err.Error(), "would take 23 bytes, over its limit of 20 bytes") {
		t.Fatalf("put past the total = %v", err)
	}
	// The rest of the transaction is kept; overwriting with less fits.
	must(t, put(s, "k2", "1"))
	must(t, put(s, "k3", "1"))
	must(t, end(nil))
	if h.Size() != 10+3+3 {
		t.Fatalf("size = %d", h.Size())
	}
}

func TestRevokeAllAndLog(t *testing.T) {
	h := memhost.New()
	s := storage(t, h)
	must(t, put(s, "a", "1"))
	h.RevokeAll(errors.New("gadget removed"))
	err := put(s, "a", "2")
	if err == nil || !strings.Contains(err.Error(), "capability revoked") || !strings.Contains(err.Error(), "gadget removed") {
		t.Fatalf("put through a revoked Storage = %v", err)
	}
	// A Storage lent afterwards works.
	must(t, put(storage(t, h), "b", "1"))

	c := h.Client()
	defer c.Release()
	f, release := c.Log(context.Background(), func(p schema.Host_log_Params) error { return p.SetText("hello there") })
	if _, err := f.Struct(); err != nil {
		t.Fatal(err)
	}
	release()
	if l := h.Logs(); len(l) != 1 || l[0] != "hello there" {
		t.Fatalf("logs = %q", l)
	}
	if !h.WaitLog("there", time.Second) || h.WaitLog("absent", 10*time.Millisecond) {
		t.Fatal("WaitLog")
	}
}

// The server counts every buffered write against per-call limits and bounds
// list answers by bytes (server/storage.go); the test Host does the same.
func TestCallLimitsAndListBudgetMatchTheServers(t *testing.T) {
	h := memhost.New(memhost.WithMaxCallWrites(3), memhost.WithMaxListBytes(10))
	s := storage(t, h)
	end := h.Begin()
	for _, k := range []string{"a", "b", "c"} {
		if err := del(s, "absent-"+k); err != nil {
			t.Fatal(err)
		}
	}
	if err := del(s, "absent-d"); err == nil || !strings.Contains(err.Error(), "this call has changed 3 keys, the limit is 3") {
		t.Fatalf("fourth delete of an absent key = %v, want the call limit", err)
	}
	end(nil)

	for _, k := range []string{"k1", "k2", "k3"} {
		if err := h.Put(k, []byte("value")); err != nil {
			t.Fatal(err)
		}
	}
	// Each entry is 7 bytes: a budget of 10 answers with one at a time.
	if got := list(t, s, "", "", 0); got != "k1=value" {
		t.Fatalf("list = %q, want one entry within 10 bytes", got)
	}
}

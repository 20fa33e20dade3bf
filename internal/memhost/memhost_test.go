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

// The storage semantics are internal/storage's, tested there against the
// memory backend memhost uses; these tests cover what memhost adds.

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

func listCount(t *testing.T, s schema.Storage, limit uint32) int {
	t.Helper()
	f, release := s.List(context.Background(), func(p schema.Storage_list_Params) error {
		p.SetLimit(limit)
		return nil
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	es, _ := res.Entries()
	return es.Len()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestTheStorageItLendsHasTheOptionsLimitsAndTheCallScope(t *testing.T) {
	h := memhost.New(memhost.WithMaxKeyBytes(4), memhost.WithMaxCallWrites(1))
	s := storage(t, h)
	if err := put(s, "toolong", "v"); err == nil || !strings.Contains(err.Error(), "storage key limit: key is 7 bytes, over the limit of 4 bytes") {
		t.Fatalf("put of a long key = %v", err)
	}
	end := h.Begin()
	must(t, put(s, "a", "1"))
	if err := put(s, "b", "1"); err == nil || !strings.Contains(err.Error(), "this call has changed 1 keys, the limit is 1") {
		t.Fatalf("second write of the call = %v", err)
	}
	if v, ok := h.Get("a"); !ok || string(v) != "1" {
		t.Fatal("Get does not read as the open call does")
	}
	if _, ok := h.Committed()["a"]; ok {
		t.Fatal("a buffered write is committed before the call ended")
	}
	must(t, end(nil))
	if c := h.Committed(); string(c["a"]) != "1" || h.Size() != 2 {
		t.Fatalf("committed %q, size %d", c, h.Size())
	}
}

func TestCommitsListedEntriesAndCommitFailuresAreCounted(t *testing.T) {
	h := memhost.New()
	s := storage(t, h)
	must(t, h.Put("a", []byte("1"))) // outside a scope: one commit
	end := h.Begin()
	must(t, put(s, "b", "2"))
	must(t, put(s, "c", "3"))
	must(t, end(nil)) // the call's: one more
	if n := h.Commits(); n != 2 {
		t.Fatalf("%d commits, want 2", n)
	}
	if n := listCount(t, s, 2); n != 2 || h.ListedEntries() != 2 {
		t.Fatalf("list(limit 2) answered %d and counted %d entries read, want 2 and 2", n, h.ListedEntries())
	}

	h.SetCommitErr(errors.New("disk full"))
	end = h.Begin()
	must(t, put(s, "d", "4"))
	if err := end(nil); err == nil || err.Error() != "disk full" {
		t.Fatalf("end = %v, want disk full", err)
	}
	if _, ok := h.Get("d"); ok || h.Commits() != 2 {
		t.Fatal("a failed commit kept its write, or was counted")
	}
	h.SetCommitErr(nil)
	must(t, h.Put("d", []byte("4")))
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

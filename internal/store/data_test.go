package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/storage"
)

func listKeys(es []storage.Entry) (out []string) {
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

func TestListHonoursPrefixAfterAndLimit(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	var writes []storage.Write
	for _, k := range []string{"a", "n/1", "n/2", "n/3", "n0", "z"} {
		writes = append(writes, storage.Write{Key: k, Value: []byte(k)})
	}
	if err := s.Commit(ctx, "g", writes, 1<<20); err != nil {
		t.Fatal(err)
	}
	all, more, _ := s.List(ctx, "g", "n/", "", 10, 1<<20)
	if !slices.Equal(listKeys(all), []string{"n/1", "n/2", "n/3"}) || more {
		t.Fatalf("prefix: %v, more=%v", listKeys(all), more)
	}
	page, more, _ := s.List(ctx, "g", "n/", "n/1", 1, 1<<20)
	if !slices.Equal(listKeys(page), []string{"n/2"}) || !more {
		t.Fatalf("after+limit: %v, more=%v", listKeys(page), more)
	}
	if other, _, _ := s.List(ctx, "other", "", "", 10, 1<<20); len(other) != 0 {
		t.Fatalf("another gadget sees %v", listKeys(other))
	}
}

// Without the byte bound, List would copy every value up to limit into
// memory: with 1000 values of 1 MiB, a gigabyte for one call.
func TestListStopsAtItsByteBudgetAndAlwaysMakesProgress(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	value := []byte(strings.Repeat("v", 1000))
	var writes []storage.Write
	for _, k := range []string{"k1", "k2", "k3", "k4", "k5"} {
		writes = append(writes, storage.Write{Key: k, Value: value})
	}
	if err := s.Commit(ctx, "g", writes, 1<<20); err != nil {
		t.Fatal(err)
	}
	// Each entry is 1002 bytes: a budget of 2500 holds two.
	got, more, err := s.List(ctx, "g", "", "", 1000, 2500)
	if err != nil || !slices.Equal(listKeys(got), []string{"k1", "k2"}) || !more {
		t.Fatalf("List = %v, more=%v, %v; want k1 k2 and more", listKeys(got), more, err)
	}
	// Paging on from the last key reads the rest, two at a time.
	got, more, _ = s.List(ctx, "g", "", "k4", 1000, 2500)
	if !slices.Equal(listKeys(got), []string{"k5"}) || more {
		t.Fatalf("last page = %v, more=%v", listKeys(got), more)
	}
	// An entry bigger than the whole budget still comes back alone, so a
	// caller paging with after always gets further.
	got, more, _ = s.List(ctx, "g", "", "", 1000, 10)
	if !slices.Equal(listKeys(got), []string{"k1"}) || !more {
		t.Fatalf("tiny budget = %v, more=%v", listKeys(got), more)
	}
}

func TestStoreCallsOnADoneContextDoNothing(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	done, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Commit(done, "g", []storage.Write{{Key: "k", Value: []byte("v")}}, 100)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit on a cancelled context = %v, want context.Canceled", err)
	}
	if _, found, _ := s.Get(context.Background(), "g", "k"); found {
		t.Fatal("a Commit on a cancelled context wrote")
	}
	if _, _, err := s.Get(done, "g", "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get = %v", err)
	}
	if _, _, err := s.List(done, "g", "", "", 10, 100); !errors.Is(err, context.Canceled) {
		t.Fatalf("List = %v", err)
	}
}

// bbolt's own writer lock cannot be waited on with a deadline; a queued
// commit's wait for its group can. A Commit queued behind one that waits for
// bbolt's writer lock gives up when its context ends instead of waiting for
// its turn.
func TestCommitStopsWaitingForItsTurnWhenItsContextEnds(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	release := holdWriteLock(t, s)
	first := startLeader(t, s, put("k", "v"))
	ctx, cancel := context.WithCancel(context.Background())
	queued := commitAsync(ctx, s, "g", put("k", "v"), 100)
	waitQueued(t, s, 1)
	cancel()
	if err := answer(t, queued); !errors.Is(err, context.Canceled) {
		t.Fatalf("queued Commit = %v, want context.Canceled", err)
	}
	release()
	if err := answer(t, first); err != nil {
		t.Fatalf("the commit it queued behind: %v", err)
	}
	if _, found, _ := s.Get(context.Background(), "g", "k"); found {
		t.Fatal("the cancelled Commit wrote")
	}
	if err := s.Commit(context.Background(), "g", put("k", "v"), 100); err != nil {
		t.Fatalf("Commit after the writer lock is free: %v", err)
	}
}

package store_test

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/internal/storage"
)

// A small gadget's data is kept inline in the "data" bucket's page, so that
// its commit rewrites no page of the gadget's own.
func TestASmallGadgetsDataLivesInItsParentsPage(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	for i := range 3 {
		if err := s.Commit(ctx, "g", put("count", string(rune('0'+i))), 100); err != nil {
			t.Fatal(err)
		}
	}
	wantValue(t, s, "g", "count", "2")
	s.DB().View(func(tx *bolt.Tx) error {
		g := tx.Bucket([]byte("data")).Bucket([]byte("g"))
		if st := g.Stats(); g.Root() != 0 || st.InlineBucketN != 1 {
			t.Errorf("the gadget's bucket has root page %d and %d inline buckets; want it inline (root 0)", g.Root(), st.InlineBucketN)
		}
		return nil
	})
}

// Data written by the first layout ("data"/gadget/{"kv"/key, "size"}) reads
// the same after the file is opened, keeps its size for the quota, and takes
// new commits.
func TestDataInTheFirstLayoutReadsTheSameAfterOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	nested := map[string]map[string]string{
		"g1": {"a": "1", "b": "22", "empty": ""},
		"g2": {},
	}
	err = db.Update(func(tx *bolt.Tx) error {
		data, err := tx.CreateBucket([]byte("data"))
		if err != nil {
			return err
		}
		for id, pairs := range nested {
			g, err := data.CreateBucket([]byte(id))
			if err != nil {
				return err
			}
			kv, err := g.CreateBucket([]byte("kv"))
			if err != nil {
				return err
			}
			var size int64
			for k, v := range pairs {
				if err := kv.Put([]byte(k), []byte(v)); err != nil {
					return err
				}
				size += storage.EntrySize(k, []byte(v))
			}
			var raw [8]byte
			binary.BigEndian.PutUint64(raw[:], uint64(size))
			if err := g.Put([]byte("size"), raw[:]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	s := openStore(t, path)
	wantValue(t, s, "g1", "a", "1")
	wantValue(t, s, "g1", "b", "22")
	wantValue(t, s, "g1", "empty", "")
	if _, found, _ := s.Get(ctx, "g1", "size"); found {
		t.Error("the first layout's size record reads as a key")
	}
	entries, more, err := s.List(ctx, "g1", "", "", 10, 1<<20)
	if err != nil || more || len(entries) != 3 {
		t.Errorf("List = %v, more=%v, %v; want the 3 pairs", entries, more, err)
	}
	for id, want := range map[string]int64{"g1": 1 + 1 + 1 + 2 + 5, "g2": 0} {
		if size, err := s.DataSize(ctx, id); size != want || err != nil {
			t.Errorf("%s: size %d, %v; want %d", id, size, err, want)
		}
	}
	// The size carried over counts against the quota: 10 bytes + "c" = 11.
	if err := s.Commit(ctx, "g1", put("c", ""), 10); !errors.Is(err, storage.ErrQuota) {
		t.Errorf("a commit past the quota with the moved size: %v", err)
	}
	if err := s.Commit(ctx, "g2", put("c", "3"), 10); err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, "g2", "c", "3")
	s.Close()

	// Opened again, nothing is moved twice.
	s = openStore(t, path)
	wantValue(t, s, "g1", "b", "22")
	wantValue(t, s, "g2", "c", "3")
}

package store

// Gadget data: each gadget's key-value pairs and their total size.
//
// Layout. A gadget's pairs are the keys of one bucket, "data"/gadget id,
// and their size is that bucket's sequence number. The bucket holds no
// bucket of its own, so while the data is small (under a quarter page)
// bbolt keeps it inline in the "data" bucket's page: a commit rewrites
// that one page, not a page of the gadget's besides, and a group of
// commits to many small gadgets rewrites a few shared pages instead of one
// each. The first layout kept the pairs in a nested "kv" bucket beside a
// "size" key; flattenGadgetData moves such data over when the file opens.
//
// Contexts. bbolt cannot cancel a transaction, and its writer lock cannot be
// waited on with a deadline. So every method here checks its context before
// it starts, long scans check it as they go, and Commit waits for its group
// (commit.go) in a select that the context can end. What no context can
// bound is the commit of a transaction that has started: bbolt writes and
// fsyncs it to the end, and any other writer (user, token or blueprint
// changes, which do not join groups) holds bbolt's lock for the length of
// its own transaction.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/internal/storage"
)

// GadgetData returns the data of gadget gadgetID in s as a storage.Store.
func GadgetData(s Store, gadgetID string) storage.Store { return gadgetData{s, gadgetID} }

type gadgetData struct {
	s  Store
	id string
}

func (g gadgetData) Get(ctx context.Context, key string) ([]byte, bool, error) {
	return g.s.Get(ctx, g.id, key)
}

func (g gadgetData) List(ctx context.Context, prefix, after string, limit int, maxBytes int64) ([]storage.Entry, bool, error) {
	return g.s.List(ctx, g.id, prefix, after, limit, maxBytes)
}

func (g gadgetData) Size(ctx context.Context) (int64, error) { return g.s.DataSize(ctx, g.id) }

func (g gadgetData) Commit(ctx context.Context, writes []storage.Write, maxSize int64) error {
	return g.s.Commit(ctx, g.id, writes, maxSize)
}

// ctxCheckEvery is how many entries a scan or commit handles between looks
// at its context.
const ctxCheckEvery = 256

// gadgetKV returns the gadget's bucket of pairs and their size, or a nil
// bucket if it has no data yet.
func gadgetKV(tx *bolt.Tx, gadgetID string) (kv *bolt.Bucket, size int64) {
	kv = tx.Bucket(bucketData).Bucket([]byte(gadgetID))
	if kv == nil {
		return nil, 0
	}
	return kv, int64(kv.Sequence())
}

// The first layout's names: "data"/gadget id/{"kv"/key -> value, "size" ->
// uint64 BE}.
var (
	oldKeyKV   = []byte("kv")
	oldKeySize = []byte("size")
)

// flattenGadgetData moves every gadget's data kept in the first layout to
// the flat one, one gadget to a transaction, so that moving holds at most
// one gadget's data in memory, and a crash between two leaves each gadget
// whole in one layout or the other. A gadget bucket holding a bucket is in
// the first layout: the flat one never nests.
func flattenGadgetData(db *bolt.DB) error {
	var nested [][]byte
	err := db.View(func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketData)
		return data.ForEachBucket(func(id []byte) error {
			if data.Bucket(id).Bucket(oldKeyKV) != nil {
				nested = append(nested, bytes.Clone(id))
			}
			return nil
		})
	})
	for _, id := range nested {
		if err != nil {
			break
		}
		err = db.Update(func(tx *bolt.Tx) error { return flattenGadget(tx.Bucket(bucketData), id) })
	}
	if err != nil {
		return fmt.Errorf("move gadget data to the flat layout: %w", err)
	}
	return nil
}

// flattenGadget replaces gadget id's bucket in the first layout with a flat
// one holding the same pairs and size.
func flattenGadget(data *bolt.Bucket, id []byte) error {
	old := data.Bucket(id)
	var size uint64
	if raw := old.Get(oldKeySize); len(raw) == 8 {
		size = binary.BigEndian.Uint64(raw)
	}
	var pairs [][2][]byte // copies: the pages under them are freed below
	err := old.Bucket(oldKeyKV).ForEach(func(k, v []byte) error {
		pairs = append(pairs, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
		return nil
	})
	if err != nil {
		return err
	}
	if err := data.DeleteBucket(id); err != nil {
		return err
	}
	flat, err := data.CreateBucket(id)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		if err := flat.Put(p[0], p[1]); err != nil {
			return err
		}
	}
	return flat.SetSequence(size)
}

// view runs fn in a read transaction unless ctx is already done.
func (s *BoltStore) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(fn)
}

func (s *BoltStore) Get(ctx context.Context, gadgetID, key string) ([]byte, bool, error) {
	var (
		value []byte
		found bool
	)
	err := s.view(ctx, func(tx *bolt.Tx) error {
		kv, _ := gadgetKV(tx, gadgetID)
		if kv == nil {
			return nil
		}
		// Get cannot tell a missing key from an empty value; a cursor can.
		k, v := kv.Cursor().Seek([]byte(key))
		if k != nil && string(k) == key {
			value, found = bytes.Clone(v), true
			if value == nil {
				value = []byte{}
			}
		}
		return nil
	})
	return value, found, err
}

func (s *BoltStore) List(ctx context.Context, gadgetID, prefix, after string, limit int, maxBytes int64) (entries []storage.Entry, more bool, err error) {
	err = s.view(ctx, func(tx *bolt.Tx) error {
		kv, _ := gadgetKV(tx, gadgetID)
		if kv == nil {
			return nil
		}
		c := kv.Cursor()
		start := prefix
		if after > start {
			start = after
		}
		var size int64
		for k, v := c.Seek([]byte(start)); k != nil && bytes.HasPrefix(k, []byte(prefix)); k, v = c.Next() {
			if string(k) == after {
				continue
			}
			n := storage.EntrySize(string(k), v)
			if len(entries) == limit || (len(entries) > 0 && size+n > maxBytes) {
				more = true
				return nil
			}
			if len(entries)%ctxCheckEvery == ctxCheckEvery-1 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			entries = append(entries, storage.Entry{Key: string(k), Value: bytes.Clone(v)})
			if entries[len(entries)-1].Value == nil {
				entries[len(entries)-1].Value = []byte{}
			}
			size += n
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return entries, more, nil
}

func (s *BoltStore) DataSize(ctx context.Context, gadgetID string) (int64, error) {
	var size int64
	err := s.view(ctx, func(tx *bolt.Tx) error {
		_, size = gadgetKV(tx, gadgetID)
		return nil
	})
	return size, err
}

func (s *BoltStore) Commit(ctx context.Context, gadgetID string, writes []storage.Write, maxSize int64) error {
	if len(writes) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return errDidNotStart(err)
	}
	return s.commits.commit(newPendingCommit(ctx, gadgetID, writes, maxSize))
}

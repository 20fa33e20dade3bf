package store

// Gadget data: each gadget's key-value pairs and their total size.
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

// gadgetKV returns the gadget's data bucket and its size, or a nil bucket if
// it has no data yet.
func gadgetKV(tx *bolt.Tx, gadgetID string) (kv *bolt.Bucket, size int64) {
	g := tx.Bucket(bucketData).Bucket([]byte(gadgetID))
	if g == nil {
		return nil, 0
	}
	if raw := g.Get(keySize); len(raw) == 8 {
		size = int64(binary.BigEndian.Uint64(raw))
	}
	return g.Bucket(keyKV), size
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

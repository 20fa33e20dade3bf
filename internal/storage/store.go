package storage

import (
	"context"
	"errors"
	"fmt"
)

// Write is one buffered change to a gadget's data.
type Write struct {
	Key    string
	Value  []byte
	Delete bool
}

// Entry is one key-value pair of a gadget's data.
type Entry struct {
	Key   string
	Value []byte
}

// EntrySize is what one key-value pair counts against a gadget's size limit
// and a list's byte budget.
func EntrySize(key string, value []byte) int64 { return int64(len(key) + len(value)) }

// ErrQuota is returned by Store.Commit when the writes would take the
// gadget's data past the size it was given.
var ErrQuota = errors.New("storage quota exceeded")

// CheckQuota is the rule Store.Commit applies: data that grows from before
// to after bytes may not end past maxSize. Shrinking is allowed even over
// it, since an operator may lower the limit.
func CheckQuota(before, after, maxSize int64) error {
	if after > maxSize && after > before {
		return fmt.Errorf("%w: %d bytes would exceed the limit of %d", ErrQuota, after, maxSize)
	}
	return nil
}

// Store keeps one gadget's committed data. Each method is one transaction
// of the backend and must be safe for concurrent use. Values a Store
// returns are the caller's; values it is given are not modified.
type Store interface {
	// Get reads one key. An empty value is found, with a non-nil value.
	Get(ctx context.Context, key string) (value []byte, found bool, err error)
	// List returns up to limit entries whose keys start with prefix and sort
	// strictly after after, in byte order. It stops before an entry that
	// would take the EntrySize of what it read past maxBytes, but always
	// returns at least one entry if there is one. more reports that it
	// stopped early: more entries may follow the last one returned.
	List(ctx context.Context, prefix, after string, limit int, maxBytes int64) (entries []Entry, more bool, err error)
	// Size is the sum of EntrySize over the data.
	Size(ctx context.Context) (int64, error)
	// Commit applies writes atomically, in order. It fails with ErrQuota
	// (see CheckQuota), applying nothing, if the result would exceed
	// maxSize bytes while growing. A Commit whose ctx ends before it
	// writes applies nothing.
	Commit(ctx context.Context, writes []Write, maxSize int64) error
}

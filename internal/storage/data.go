package storage

// Design: one Data serves every Storage capability of one gadget. wasmhost
// brackets each top-level call into the guest with Begin and its end
// (WithCallScope) and never nests scopes, so at most one transaction buffer
// (tx) exists at a time. Storage calls run on go-capnp server goroutines
// while the guest waits for them, and tests call in from their own; mu
// orders them all with Begin and end. The Store is called under mu: reads,
// so that what a call sees and the size it counts stay consistent with its
// buffer; and commits, so that Close, which the server calls before it
// deletes the gadget's data, waits for a commit in progress and refuses
// later ones. A Data owns its tx; the Store may be shared with other readers
// and is safe for concurrent use.
//
// Bounds. Everything a call buffers is counted against the per-call limits:
// every put and every delete, of a key that exists or not, by the keys it
// touches and the bytes it holds. A list answers within the list budget of
// keys and values (and with at least one entry, so paging always
// progresses), and holds at most that much of the Store at once: when the
// call's buffered deletes hide everything one read returned, it reads on,
// past at most as many entries as the call deleted.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// CommitTimeout bounds the commit at the end of a call: its wait for the
// Store and its writing. A commit it cuts off is applied whole or not at
// all (the server's store: store/commit.go); if not, the call fails.
const CommitTimeout = 30 * time.Second

// ErrRemoved is what every operation on a closed Data fails with, and the
// end of a call with writes that was open when it closed.
var ErrRemoved = errors.New("gadget was removed")

// Data is one gadget's storage with per-call transactions over a Store. Its
// methods are safe for concurrent use.
type Data struct {
	store Store
	lim   Limits

	mu     sync.Mutex
	tx     *txBuffer // nil outside a call scope
	closed bool
}

// New returns the storage of one gadget kept in s, bounded by lim.
func New(s Store, lim Limits) *Data { return &Data{store: s, lim: lim.withDefaults()} }

// Limits returns the limits d enforces, defaults filled in.
func (d *Data) Limits() Limits { return d.lim }

// txBuffer holds one call's writes until the call returns.
type txBuffer struct {
	writes map[string]Write // newest write per key
	order  []string         // keys in first-write order, for Commit
	size   int64            // the gadget's data size as this call sees it; -1 until read
	held   int64            // bytes the buffer holds, by bufferCost
}

// bufferCost is what w counts against Limits.MaxCallBytes.
func bufferCost(w Write) int64 { return int64(len(w.Key)+len(w.Value)) + WriteOverhead }

// ownKey marks a context whose storage operations are transactions of their
// own.
type ownKey struct{}

// OwnTransaction returns a context under which every storage operation is a
// transaction of its own: it neither sees nor joins the call scope that is
// open, as a client calling a Storage the gadget delegated to it must not.
func OwnTransaction(ctx context.Context) context.Context {
	return context.WithValue(ctx, ownKey{}, true)
}

// Begin opens the scope of one call, for wasmhost.WithCallScope. The
// returned end commits the call's writes if the call succeeded (callErr
// nil), and discards them if it failed. A commit that fails is returned,
// and wasmhost turns the call into a failure: its caller is never told
// "done" about writes that were lost.
//
// Scopes do not nest: a Begin while a scope is open replaces its buffer
// (wasmhost opens one scope per top-level call and never nests them).
func (d *Data) Begin() (end func(callErr error) error) {
	d.mu.Lock()
	d.tx = &txBuffer{writes: make(map[string]Write), size: -1}
	d.mu.Unlock()
	return d.end
}

func (d *Data) end(callErr error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	tx := d.tx
	d.tx = nil
	if callErr != nil || tx == nil || len(tx.order) == 0 {
		return nil
	}
	if d.closed {
		return ErrRemoved
	}
	ctx, cancel := context.WithTimeout(context.Background(), CommitTimeout)
	defer cancel()
	return d.store.Commit(ctx, tx.list(), d.lim.MaxTotalBytes)
}

// Close makes every later operation fail with ErrRemoved, and the end of
// the open call too if it has writes: they are discarded, and its caller is
// not told they were kept. Close waits for a commit in progress, so once it
// returns nothing more reaches the Store through d.
func (d *Data) Close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
}

func (tx *txBuffer) list() []Write {
	out := make([]Write, len(tx.order))
	for i, k := range tx.order {
		out[i] = tx.writes[k]
	}
	return out
}

// admit checks that buffering w keeps the call within its limits.
func (tx *txBuffer) admit(w Write, maxWrites int, maxBytes int64) error {
	held := tx.held + bufferCost(w)
	old, replaces := tx.writes[w.Key]
	if replaces {
		held -= bufferCost(old)
	} else if len(tx.order) >= maxWrites {
		return fmt.Errorf("storage call limit: this call has changed %d keys, the limit is %d; split the work over several calls", len(tx.order), maxWrites)
	}
	if held > maxBytes && held > tx.held {
		return fmt.Errorf("storage call limit: this call's buffered writes would hold %d bytes, the limit is %d; split the work over several calls", held, maxBytes)
	}
	return nil
}

func (tx *txBuffer) record(w Write) {
	if old, ok := tx.writes[w.Key]; ok {
		tx.held -= bufferCost(old)
	} else {
		tx.order = append(tx.order, w.Key)
	}
	tx.writes[w.Key] = w
	tx.held += bufferCost(w)
}

// txFor returns the transaction an operation with ctx belongs to: the open
// one, unless ctx is from OwnTransaction, or nil for a transaction of its
// own. Callers hold mu.
func (d *Data) txFor(ctx context.Context) *txBuffer {
	if ctx.Value(ownKey{}) != nil {
		return nil
	}
	return d.tx
}

// lookup reads key as an operation in transaction tx sees it. Callers hold
// mu.
func (d *Data) lookup(ctx context.Context, tx *txBuffer, key string) ([]byte, bool, error) {
	if tx != nil {
		if w, ok := tx.writes[key]; ok {
			return w.Value, !w.Delete, nil
		}
	}
	return d.store.Get(ctx, key)
}

// Get reads key as the call ctx belongs to sees it: its own unsaved writes
// included. The value must not be modified.
func (d *Data) Get(ctx context.Context, key string) (value []byte, found bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, false, ErrRemoved
	}
	return d.lookup(ctx, d.txFor(ctx), key)
}

// Put sets key to a copy of value, in the call's transaction, or at once
// outside a call scope, after checking every limit.
func (d *Data) Put(ctx context.Context, key string, value []byte) error {
	if err := d.checkKey(key); err != nil {
		return err
	}
	if len(value) > d.lim.MaxValueBytes {
		return fmt.Errorf("storage value limit: value for %q is %d bytes, over the limit of %d bytes", key, len(value), d.lim.MaxValueBytes)
	}
	// A copy: the caller's value (in a Cap'n Proto call, its message, freed
	// when the handler returns) does not live as long as the transaction.
	return d.write(ctx, Write{Key: key, Value: append([]byte{}, value...)})
}

// Delete deletes key, in the call's transaction, or at once outside a call
// scope. Deleting a key that does not exist changes nothing, but counts
// against the call's limits like any write.
func (d *Data) Delete(ctx context.Context, key string) error {
	if err := d.checkKey(key); err != nil {
		return err
	}
	return d.write(ctx, Write{Key: key, Delete: true})
}

func (d *Data) checkKey(key string) error {
	if key == "" {
		return errors.New("storage key must not be empty")
	}
	if len(key) > d.lim.MaxKeyBytes {
		return fmt.Errorf("storage key limit: key is %d bytes, over the limit of %d bytes", len(key), d.lim.MaxKeyBytes)
	}
	return nil
}

// write applies w to the call's transaction, or commits it on its own if it
// has none, after checking the call's limits and the gadget's size limit.
func (d *Data) write(ctx context.Context, w Write) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrRemoved
	}
	tx := d.txFor(ctx)
	if tx != nil {
		if err := tx.admit(w, d.lim.MaxCallWrites, d.lim.MaxCallBytes); err != nil {
			return err
		}
	}
	old, found, err := d.lookup(ctx, tx, w.Key)
	if err != nil {
		return err
	}
	var delta int64
	if found {
		delta -= EntrySize(w.Key, old)
	}
	if !w.Delete {
		delta += EntrySize(w.Key, w.Value)
	}
	size, err := d.size(ctx, tx)
	if err != nil {
		return err
	}
	limit := d.lim.MaxTotalBytes
	if delta > 0 && size+delta > limit {
		return fmt.Errorf("storage size limit: writing %q would bring this gadget's storage to %d bytes, over the limit of %d bytes", w.Key, size+delta, limit)
	}
	if tx != nil {
		tx.record(w)
		tx.size = size + delta
		return nil
	}
	if err := d.store.Commit(ctx, []Write{w}, limit); err != nil {
		return err
	}
	// A write of its own changes what the open call sees, unless that call
	// has written the key itself.
	if open := d.tx; open != nil && open.size >= 0 {
		if _, shadowed := open.writes[w.Key]; !shadowed {
			open.size += delta
		}
	}
	return nil
}

// size is the gadget's data size as an operation in transaction tx sees it.
// Callers hold mu.
func (d *Data) size(ctx context.Context, tx *txBuffer) (int64, error) {
	if tx != nil && tx.size >= 0 {
		return tx.size, nil
	}
	size, err := d.store.Size(ctx)
	if err != nil {
		return 0, err
	}
	if tx != nil {
		tx.size = size
	}
	return size, nil
}

// List returns the entries under prefix that sort after after, in key
// order, as the call ctx belongs to sees them: at most limit of them (0, or
// more than ListLimit, means ListLimit) and at most Limits.MaxListBytes of
// keys and values, but at least one if there is one. A caller pages on with
// the last key it got as after, until an answer is empty. The values must
// not be modified.
func (d *Data) List(ctx context.Context, prefix, after string, limit int) ([]Entry, error) {
	if limit <= 0 || limit > ListLimit {
		limit = ListLimit
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrRemoved
	}
	budget := d.lim.MaxListBytes
	tx := d.txFor(ctx)
	if tx == nil {
		stored, _, err := d.store.List(ctx, prefix, after, limit, budget)
		return stored, err
	}
	// Buffered deletes can hide at most one stored entry each, so reading
	// that many more than limit from the Store is enough for limit entries,
	// unless the budget cut the read short. Then only keys up to the last
	// one read are known, and the answer ends there; if buffered deletes hid
	// all of those, it reads on, since an empty answer means the end.
	for {
		stored, more, err := d.store.List(ctx, prefix, after, limit+len(tx.writes), budget)
		if err != nil {
			return nil, err
		}
		out := tx.overlay(stored, more, prefix, after)
		if len(out) > 0 || !more {
			return firstWithin(out, limit, budget), nil
		}
		after = stored[len(stored)-1].Key
	}
}

// overlay merges the buffered writes under prefix and after into stored, in
// key order. If more stored entries follow, writes past the last stored key
// are left for a later page.
func (tx *txBuffer) overlay(stored []Entry, more bool, prefix, after string) []Entry {
	merged := make(map[string][]byte, len(stored))
	for _, e := range stored {
		merged[e.Key] = e.Value
	}
	for k, w := range tx.writes {
		if !strings.HasPrefix(k, prefix) || k <= after || more && k > stored[len(stored)-1].Key {
			continue
		}
		if w.Delete {
			delete(merged, k)
		} else {
			merged[k] = w.Value
		}
	}
	out := make([]Entry, 0, len(merged))
	for k, v := range merged {
		out = append(out, Entry{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// firstWithin returns the longest prefix of entries with at most limit
// entries and budget bytes, but at least one entry.
func firstWithin(entries []Entry, limit int, budget int64) []Entry {
	var size int64
	for i, e := range entries {
		size += EntrySize(e.Key, e.Value)
		if i == limit || i > 0 && size > budget {
			return entries[:i]
		}
	}
	return entries
}

package server

// Design: one gadgetStorage per live gadget serves every Storage capability
// of that gadget. wasmhost brackets each top-level call into the guest with
// begin/end (WithCallScope) and never nests scopes, so at most one
// transaction buffer (tx) exists at a time. Storage calls run on go-capnp
// server goroutines while the guest waits for them; mu orders them with
// begin/end. end commits under mu so that close, which removeGadget calls
// before deleting the data, waits for a commit in progress and refuses later
// ones.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server/internal/store"
)

const (
	defaultListLimit = 1000
	commitTimeout    = 30 * time.Second
)

type gadgetStorage struct {
	s    *Server
	id   string
	logs *logRing // where a failed commit is reported

	mu     sync.Mutex
	tx     *txBuffer // nil outside a call scope
	closed bool
}

// txBuffer holds one call's writes until the call returns.
type txBuffer struct {
	writes map[string]store.Write // newest write per key
	order  []string               // keys in first-write order, for Commit
	size   int64                  // the gadget's data size as this call sees it
}

func newGadgetStorage(s *Server, id string, logs *logRing) *gadgetStorage {
	return &gadgetStorage{s: s, id: id, logs: logs}
}

var errGadgetGone = errors.New("gadget was removed")

// begin opens the scope of one call; the returned end commits or discards.
func (st *gadgetStorage) begin() func(error) error {
	st.mu.Lock()
	st.tx = &txBuffer{writes: make(map[string]store.Write), size: -1}
	st.mu.Unlock()
	return st.end
}

// end commits the call's writes if the call succeeded. A commit that fails
// is returned, and wasmhost turns the call into a failure: its caller is
// never told "done" about writes that were lost.
func (st *gadgetStorage) end(callErr error) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	tx := st.tx
	st.tx = nil
	if callErr != nil || tx == nil || len(tx.order) == 0 {
		return nil
	}
	if st.closed {
		return errGadgetGone
	}
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	if err := st.s.store.Commit(ctx, st.id, tx.list(), st.s.cfg.maxStorageSize); err != nil {
		st.s.cfg.logger.Error("committing gadget storage failed; the call fails", "gadget", st.id, "err", err)
		st.logs.add(schema.LogLevel_error, "storage commit failed; the call that made these writes failed: "+err.Error())
		return err
	}
	return nil
}

func (st *gadgetStorage) close() {
	st.mu.Lock()
	st.closed = true
	st.tx = nil
	st.mu.Unlock()
}

func (tx *txBuffer) list() []store.Write {
	out := make([]store.Write, len(tx.order))
	for i, k := range tx.order {
		out[i] = tx.writes[k]
	}
	return out
}

func (tx *txBuffer) record(w store.Write) {
	if _, ok := tx.writes[w.Key]; !ok {
		tx.order = append(tx.order, w.Key)
	}
	tx.writes[w.Key] = w
}

// lookup reads key as the current call sees it. Callers hold mu.
func (st *gadgetStorage) lookup(ctx context.Context, key string) ([]byte, bool, error) {
	if st.tx != nil {
		if w, ok := st.tx.writes[key]; ok {
			return w.Value, !w.Delete, nil
		}
	}
	return st.s.store.Get(ctx, st.id, key)
}

func (st *gadgetStorage) Get(ctx context.Context, call schema.Storage_get) error {
	key, err := call.Args().Key()
	if err != nil {
		return err
	}
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return errGadgetGone
	}
	value, found, err := st.lookup(ctx, key)
	st.mu.Unlock()
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetFound(found)
	if found {
		return res.SetValue(value)
	}
	return nil
}

func (st *gadgetStorage) Put(ctx context.Context, call schema.Storage_put) error {
	key, err := call.Args().Key()
	if err != nil {
		return err
	}
	value, err := call.Args().Value()
	if err != nil {
		return err
	}
	cfg := st.s.cfg
	if err := checkKey(key, cfg.maxKeySize); err != nil {
		return err
	}
	if len(value) > cfg.maxValueSize {
		return fmt.Errorf("storage value limit: value for %q is %d bytes, over the limit of %d bytes", key, len(value), cfg.maxValueSize)
	}
	// The value lives in the call's message, which is freed when this
	// handler returns; the transaction outlives it.
	return st.write(ctx, store.Write{Key: key, Value: bytes.Clone(value)})
}

func (st *gadgetStorage) Delete(ctx context.Context, call schema.Storage_delete) error {
	key, err := call.Args().Key()
	if err != nil {
		return err
	}
	if err := checkKey(key, st.s.cfg.maxKeySize); err != nil {
		return err
	}
	return st.write(ctx, store.Write{Key: key, Delete: true})
}

func checkKey(key string, max int) error {
	if key == "" {
		return errors.New("storage key must not be empty")
	}
	if len(key) > max {
		return fmt.Errorf("storage key limit: key is %d bytes, over the limit of %d bytes", len(key), max)
	}
	return nil
}

// write applies w to the open transaction, or on its own if no call scope is
// open, after checking the per-gadget size limit.
func (st *gadgetStorage) write(ctx context.Context, w store.Write) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return errGadgetGone
	}
	old, found, err := st.lookup(ctx, w.Key)
	if err != nil {
		return err
	}
	var delta int64
	if found {
		delta -= store.EntrySize(w.Key, old)
	}
	if !w.Delete {
		delta += store.EntrySize(w.Key, w.Value)
	}
	size, err := st.size(ctx)
	if err != nil {
		return err
	}
	limit := st.s.cfg.maxStorageSize
	if delta > 0 && size+delta > limit {
		return fmt.Errorf("storage size limit: writing %q would bring this gadget's storage to %d bytes, over the limit of %d bytes", w.Key, size+delta, limit)
	}
	if st.tx == nil {
		return st.s.store.Commit(ctx, st.id, []store.Write{w}, limit)
	}
	st.tx.record(w)
	st.tx.size = size + delta
	return nil
}

// size is the gadget's data size as the current call sees it. Callers hold mu.
func (st *gadgetStorage) size(ctx context.Context) (int64, error) {
	if st.tx != nil && st.tx.size >= 0 {
		return st.tx.size, nil
	}
	size, err := st.s.store.DataSize(ctx, st.id)
	if err != nil {
		return 0, err
	}
	if st.tx != nil {
		st.tx.size = size
	}
	return size, nil
}

func (st *gadgetStorage) List(ctx context.Context, call schema.Storage_list) error {
	args := call.Args()
	prefix, err := args.Prefix()
	if err != nil {
		return err
	}
	after, err := args.After()
	if err != nil {
		return err
	}
	limit := int(args.Limit())
	if limit == 0 || limit > defaultListLimit {
		limit = defaultListLimit
	}

	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return errGadgetGone
	}
	entries, err := st.listLocked(ctx, prefix, after, limit)
	st.mu.Unlock()
	if err != nil {
		return err
	}

	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewEntries(int32(len(entries)))
	if err != nil {
		return err
	}
	for i, e := range entries {
		if err := list.At(i).SetKey(e.Key); err != nil {
			return err
		}
		if err := list.At(i).SetValue(e.Value); err != nil {
			return err
		}
	}
	return nil
}

// listLocked overlays the open transaction on the stored entries. Buffered
// deletes can hide at most one stored entry each, so reading that many more
// than limit from the store is always enough.
func (st *gadgetStorage) listLocked(ctx context.Context, prefix, after string, limit int) ([]store.Entry, error) {
	buffered := 0
	if st.tx != nil {
		buffered = len(st.tx.writes)
	}
	stored, err := st.s.store.List(ctx, st.id, prefix, after, limit+buffered)
	if err != nil || st.tx == nil {
		return stored, err
	}
	merged := make(map[string][]byte, len(stored))
	for _, e := range stored {
		merged[e.Key] = e.Value
	}
	for k, w := range st.tx.writes {
		if !strings.HasPrefix(k, prefix) || k <= after {
			continue
		}
		if w.Delete {
			delete(merged, k)
		} else {
			merged[k] = w.Value
		}
	}
	out := make([]store.Entry, 0, len(merged))
	for k, v := range merged {
		out = append(out, store.Entry{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b store.Entry) int { return strings.Compare(a.Key, b.Key) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

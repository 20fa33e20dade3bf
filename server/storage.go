package server

// Design: one gadgetStorage per live gadget serves every Storage capability
// of that gadget. wasmhost brackets each top-level call into the guest with
// begin/end (WithCallScope) and never nests scopes, so at most one
// transaction buffer (tx) exists at a time. Storage calls run on go-capnp
// server goroutines while the guest waits for them; mu orders them with
// begin/end. end commits under mu so that close, which removeGadget calls
// before deleting the data, waits for a commit in progress and refuses later
// ones.
//
// Delegation. A gadget may hand its Storage to a client. That client's calls
// arrive over a connection, which peerStorage marks, and each is a
// transaction of its own: it neither sees nor joins the call the guest is
// running (txFor). Only calls made in process, as the guest's are, share the
// guest's call scope.
//
// Bounds. Everything a call buffers is counted against the per-call limits
// (WithStorageCallLimits): every put and every delete, of a key that exists
// or not, by the keys it touches and the bytes it holds. A list reads at
// most the list budget of keys and values from the store, and answers with
// no more than that (and at least one entry, so paging always progresses).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

const (
	defaultListLimit = 1000
	// commitTimeout bounds the wait for the store's writer slot; a commit
	// that has started runs to the end (see store/data.go).
	commitTimeout = 30 * time.Second
	// writeOverhead is what one buffered write costs beyond its key and
	// value: the map entry, the order slot and the Write itself.
	writeOverhead = 64
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
	held   int64                  // bytes the buffer holds, by bufferCost
}

// bufferCost is what w counts against the per-call byte limit.
func bufferCost(w store.Write) int64 { return int64(len(w.Key)+len(w.Value)) + writeOverhead }

// newGadgetStorageLocked returns a new storage for gadget id, registered in
// Server.storages until Shutdown. Callers hold Server.mu.
func (s *Server) newGadgetStorageLocked(id string, logs *logRing) *gadgetStorage {
	st := &gadgetStorage{s: s, id: id, logs: logs}
	if s.storages[id] == nil {
		s.storages[id] = make(map[*gadgetStorage]struct{})
	}
	s.storages[id][st] = struct{}{}
	return st
}

// Shutdown runs when the last reference to the Storage capability is gone.
func (st *gadgetStorage) Shutdown() {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.storages[st.id], st)
	if len(s.storages[st.id]) == 0 {
		delete(s.storages, st.id)
	}
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
		st.logs.keep(schema.LogLevel_error, "storage commit failed; the call that made these writes failed: "+err.Error())
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

// admit checks that buffering w keeps the call within its limits.
func (tx *txBuffer) admit(w store.Write, maxWrites int, maxBytes int64) error {
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

func (tx *txBuffer) record(w store.Write) {
	if old, ok := tx.writes[w.Key]; ok {
		tx.held -= bufferCost(old)
	} else {
		tx.order = append(tx.order, w.Key)
	}
	tx.writes[w.Key] = w
	tx.held += bufferCost(w)
}

// txFor returns the transaction a Storage call with ctx belongs to: the
// guest's open one, unless the call came from a peer (see peerStorage), or
// nil for a transaction of its own. Callers hold mu.
func (st *gadgetStorage) txFor(ctx context.Context) *txBuffer {
	if fromPeer(ctx) {
		return nil
	}
	return st.tx
}

// lookup reads key as a call in transaction tx sees it. Callers hold mu.
func (st *gadgetStorage) lookup(ctx context.Context, tx *txBuffer, key string) ([]byte, bool, error) {
	if tx != nil {
		if w, ok := tx.writes[key]; ok {
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
	value, found, err := st.lookup(ctx, st.txFor(ctx), key)
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

// write applies w to the call's transaction, or commits it on its own if it
// has none, after checking the per-gadget size limit.
func (st *gadgetStorage) write(ctx context.Context, w store.Write) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return errGadgetGone
	}
	cfg := st.s.cfg
	tx := st.txFor(ctx)
	if tx != nil {
		if err := tx.admit(w, cfg.maxCallWrites, cfg.maxCallBytes); err != nil {
			return err
		}
	}
	old, found, err := st.lookup(ctx, tx, w.Key)
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
	size, err := st.size(ctx, tx)
	if err != nil {
		return err
	}
	limit := cfg.maxStorageSize
	if delta > 0 && size+delta > limit {
		return fmt.Errorf("storage size limit: writing %q would bring this gadget's storage to %d bytes, over the limit of %d bytes", w.Key, size+delta, limit)
	}
	if tx != nil {
		tx.record(w)
		tx.size = size + delta
		return nil
	}
	if err := st.s.store.Commit(ctx, st.id, []store.Write{w}, limit); err != nil {
		return err
	}
	// A peer's write changes what the guest's open call sees, unless that
	// call has written the key itself.
	if g := st.tx; g != nil && g.size >= 0 {
		if _, shadowed := g.writes[w.Key]; !shadowed {
			g.size += delta
		}
	}
	return nil
}

// size is the gadget's data size as a call in transaction tx sees it.
// Callers hold mu.
func (st *gadgetStorage) size(ctx context.Context, tx *txBuffer) (int64, error) {
	if tx != nil && tx.size >= 0 {
		return tx.size, nil
	}
	size, err := st.s.store.DataSize(ctx, st.id)
	if err != nil {
		return 0, err
	}
	if tx != nil {
		tx.size = size
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

// listLocked overlays the open transaction on the stored entries, within
// the list byte budget. Buffered deletes can hide at most one stored entry
// each, so reading that many more than limit from the store is enough for
// limit entries, unless the budget cut the read short. Then only keys up to
// the last one read are known, and the answer ends there; if buffered
// deletes hid all of those, it reads on, since an empty answer means the
// end.
func (st *gadgetStorage) listLocked(ctx context.Context, prefix, after string, limit int) ([]store.Entry, error) {
	budget := st.s.cfg.maxListBytes
	tx := st.txFor(ctx)
	if tx == nil {
		stored, _, err := st.s.store.List(ctx, st.id, prefix, after, limit, budget)
		return stored, err
	}
	for {
		stored, more, err := st.s.store.List(ctx, st.id, prefix, after, limit+len(tx.writes), budget)
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
func (tx *txBuffer) overlay(stored []store.Entry, more bool, prefix, after string) []store.Entry {
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
	out := make([]store.Entry, 0, len(merged))
	for k, v := range merged {
		out = append(out, store.Entry{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b store.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// firstWithin returns the longest prefix of entries with at most limit
// entries and budget bytes, but at least one entry.
func firstWithin(entries []store.Entry, limit int, budget int64) []store.Entry {
	var size int64
	for i, e := range entries {
		size += store.EntrySize(e.Key, e.Value)
		if i == limit || i > 0 && size > budget {
			return entries[:i]
		}
	}
	return entries
}

// capability returns a new Storage capability for st, as Host.storage
// hands it out.
func (st *gadgetStorage) capability() schema.Storage {
	srv := capserver.New(schema.Storage_Methods(nil, st), st, st)
	return schema.Storage(capnp.NewClient(&peerStorage{storage: srv}))
}

// peerKey marks the context of a Storage call that arrived over a Cap'n
// Proto connection.
type peerKey struct{}

func fromPeer(ctx context.Context) bool { return ctx.Value(peerKey{}) != nil }

// peerStorage is the Storage capability a gadget's Host hands out. A gadget
// may delegate it to a client, and a client's call must not join the call
// the guest is running: it would see that call's unsaved writes, and its
// own writes would commit or vanish with it. go-capnp delivers a call that
// arrives over a connection through Recv and an in-process call (the
// guest's own, which wasmhost makes with SendCall) through Send, so Recv
// marks its context and the call gets a transaction of its own. Both
// forward straight to the Storage server, with its brand.
type peerStorage struct{ storage capnp.Client }

func (p *peerStorage) Send(ctx context.Context, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
	return p.storage.SendCall(ctx, s)
}

func (p *peerStorage) Recv(ctx context.Context, r capnp.Recv) capnp.PipelineCaller {
	return p.storage.RecvCall(context.WithValue(ctx, peerKey{}, true), r)
}

func (p *peerStorage) Brand() capnp.Brand {
	snap := p.storage.Snapshot()
	defer snap.Release()
	return snap.Brand()
}

func (p *peerStorage) Shutdown() { p.storage.Release() }

func (p *peerStorage) String() string { return "peer-aware " + p.storage.String() }

package memhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/revocable"
	"github.com/gadgetd/gadgetd/schema"
)

// Default limits, the server's (see schema/gadget.capnp and server/options.go).
const (
	DefaultMaxKeyBytes   = 512
	DefaultMaxValueBytes = 1 << 20
	DefaultMaxTotalBytes = 64 << 20
	DefaultMaxCallWrites = 100_000  // keys one call may change
	DefaultMaxCallBytes  = 64 << 20 // bytes one call's buffered writes may hold
	DefaultMaxListBytes  = 4 << 20  // bytes of keys and values in one list answer
)

// writeOverhead is what one buffered write counts beyond its key and value,
// as on the server.
const writeOverhead = 64

// listLimit is the most entries one Storage.list returns, as on the server.
const listLimit = 1000

// Option configures a Host.
type Option func(*Host)

// WithMaxKeyBytes sets the longest key a write may use.
func WithMaxKeyBytes(n int) Option { return func(h *Host) { h.maxKey = n } }

// WithMaxValueBytes sets the largest value a write may store.
func WithMaxValueBytes(n int) Option { return func(h *Host) { h.maxValue = n } }

// WithMaxTotalBytes sets how many bytes of keys plus values the gadget may
// keep.
func WithMaxTotalBytes(n int) Option { return func(h *Host) { h.maxTotal = n } }

// WithMaxCallWrites sets how many keys one call may change (puts and
// deletes, of keys that exist or not).
func WithMaxCallWrites(n int) Option { return func(h *Host) { h.maxCallWrites = n } }

// WithMaxCallBytes sets how many bytes one call's buffered writes may hold,
// each counted as its key, its value and writeOverhead.
func WithMaxCallBytes(n int) Option { return func(h *Host) { h.maxCallBytes = n } }

// WithMaxListBytes sets how many bytes of keys and values one Storage.list
// answers with (always at least one entry).
func WithMaxListBytes(n int) Option { return func(h *Host) { h.maxListBytes = n } }

// Host is an in-memory schema.Host: storage with the server's per-call
// transaction rule and limits, and a log. Its methods are safe for
// concurrent use.
type Host struct {
	maxKey, maxValue, maxTotal  int
	maxCallWrites, maxCallBytes int
	maxListBytes                int

	mu        sync.Mutex
	data      map[string][]byte // committed
	size      int               // of data: keys plus values
	pending   map[string][]byte // nil outside a call scope; nil value = delete
	held      int               // bytes pending holds, by bufferCost
	logs      []string
	commits   int
	listed    int
	commitErr error
	grants    []*revocable.Revoker // every Storage lent out, for RevokeAll
}

// New returns an empty Host.
func New(opts ...Option) *Host {
	h := &Host{
		maxKey:   DefaultMaxKeyBytes,
		maxValue: DefaultMaxValueBytes,
		maxTotal: DefaultMaxTotalBytes,

		maxCallWrites: DefaultMaxCallWrites,
		maxCallBytes:  DefaultMaxCallBytes,
		maxListBytes:  DefaultMaxListBytes,

		data: map[string][]byte{},
	}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Client returns a new reference to the Host capability, to pass to
// wasmhost's Runtime.NewGadget.
func (h *Host) Client() schema.Host {
	return schema.Host(capserver.New(schema.Host_Methods(nil, hostServer{h}), h, nil))
}

// Begin is a wasmhost.WithCallScope callback: it opens the transaction of
// one call and returns the function that ends it, committing the call's
// writes if the call succeeded (err nil) and discarding them if it failed.
// The end function returns the commit's error, set with SetCommitErr, when a
// call with writes cannot be committed; the writes are then discarded.
func (h *Host) Begin() func(error) error {
	h.mu.Lock()
	h.pending, h.held = map[string][]byte{}, 0
	h.mu.Unlock()
	return func(err error) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		pending := h.pending
		h.pending = nil
		if err != nil || len(pending) == 0 {
			return nil
		}
		if h.commitErr != nil {
			return h.commitErr
		}
		for k, v := range pending {
			h.apply(k, v)
		}
		h.commits++
		return nil
	}
}

// SetCommitErr makes every later commit of a call with writes fail with err,
// as a full disk would; nil makes commits succeed again.
func (h *Host) SetCommitErr(err error) {
	h.mu.Lock()
	h.commitErr = err
	h.mu.Unlock()
}

// Commits is how many calls have committed writes.
func (h *Host) Commits() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.commits
}

// ListedEntries is how many entries Storage.list has returned in all, for
// checks of what a gadget's operation costs.
func (h *Host) ListedEntries() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.listed
}

// RevokeAll cuts off every Storage capability the Host has lent so far, as
// the server does when a gadget is removed; callers then fail with
// revocable.ErrRevoked joined with reason.
func (h *Host) RevokeAll(reason error) {
	h.mu.Lock()
	grants := h.grants
	h.grants = nil
	h.mu.Unlock()
	for _, r := range grants {
		r.Revoke(reason)
	}
}

// Get reads key as the open call, if any, sees it: a call's unsaved writes
// included. Outside a call scope it reads the committed data.
func (h *Host) Get(key string) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.lookup(key)
	return bytes.Clone(v), ok
}

// Put writes key as a gadget would, limits checked: at once outside a call
// scope, into the open call's transaction inside one.
func (h *Host) Put(key string, value []byte) error {
	return h.write(key, append([]byte{}, value...))
}

// Delete deletes key as a gadget would: at once outside a call scope, into
// the open call's transaction inside one.
func (h *Host) Delete(key string) error {
	return h.write(key, nil)
}

// Committed returns a copy of the committed data.
func (h *Host) Committed() map[string][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[string][]byte, len(h.data))
	for k, v := range h.data {
		m[k] = bytes.Clone(v)
	}
	return m
}

// Size is the size of the committed data: keys plus values, in bytes.
func (h *Host) Size() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.size
}

// Logs returns a copy of the lines the gadget has logged.
func (h *Host) Logs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.logs...)
}

// WaitLog waits up to timeout for a logged line containing s and reports
// whether one came.
func (h *Host) WaitLog(s string, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); ; time.Sleep(time.Millisecond) {
		h.mu.Lock()
		for _, l := range h.logs {
			if strings.Contains(l, s) {
				h.mu.Unlock()
				return true
			}
		}
		h.mu.Unlock()
		if !time.Now().Before(deadline) {
			return false
		}
	}
}

// lookup reads k as the current call sees it. h.mu must be held.
func (h *Host) lookup(k string) ([]byte, bool) {
	if v, ok := h.pending[k]; ok {
		return v, v != nil
	}
	v, ok := h.data[k]
	return v, ok
}

// total is the size of the data as the current call sees it. h.mu must be
// held.
func (h *Host) total() int {
	n := h.size
	for k, v := range h.pending {
		if old, ok := h.data[k]; ok {
			n -= len(k) + len(old)
		}
		if v != nil {
			n += len(k) + len(v)
		}
	}
	return n
}

// write checks and applies one write (v nil deletes): to the open
// transaction, or on its own outside a call scope. v must not be shared.
func (h *Host) write(k string, v []byte) error {
	if k == "" {
		return errors.New("storage key must not be empty")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(k) > h.maxKey {
		return fmt.Errorf("storage limit: key is %d bytes, over the limit of %d", len(k), h.maxKey)
	}
	if v != nil {
		if len(v) > h.maxValue {
			return fmt.Errorf("storage limit: value is %d bytes, over the limit of %d", len(v), h.maxValue)
		}
		total := h.total() + len(k) + len(v)
		delta := len(k) + len(v)
		if old, ok := h.lookup(k); ok {
			total -= len(k) + len(old)
			delta -= len(k) + len(old)
		}
		if delta > 0 && total > h.maxTotal {
			return fmt.Errorf("storage limit: the gadget's data would take %d bytes, over its limit of %d bytes", total, h.maxTotal)
		}
	}
	if h.pending != nil {
		held := h.held + bufferCost(k, v)
		old, replaces := h.pending[k]
		if replaces {
			held -= bufferCost(k, old)
		} else if len(h.pending) >= h.maxCallWrites {
			return fmt.Errorf("storage call limit: this call has changed %d keys, the limit is %d; split the work over several calls", len(h.pending), h.maxCallWrites)
		}
		if held > h.maxCallBytes && held > h.held {
			return fmt.Errorf("storage call limit: this call's buffered writes would hold %d bytes, the limit is %d; split the work over several calls", held, h.maxCallBytes)
		}
		h.pending[k], h.held = v, held
	} else {
		h.apply(k, v)
	}
	return nil
}

func bufferCost(k string, v []byte) int { return len(k) + len(v) + writeOverhead }

// apply commits one write. h.mu must be held.
func (h *Host) apply(k string, v []byte) {
	if old, ok := h.data[k]; ok {
		h.size -= len(k) + len(old)
		delete(h.data, k)
	}
	if v != nil {
		h.data[k] = v
		h.size += len(k) + len(v)
	}
}

// list returns up to limit entries under prefix after after, in key order,
// as the current call sees them, within the list byte budget (but at least
// one). h.mu must be held.
func (h *Host) list(prefix, after string, limit int) (keys []string, vals [][]byte) {
	for k := range h.data {
		if strings.HasPrefix(k, prefix) && k > after {
			if _, ok := h.pending[k]; !ok {
				keys = append(keys, k)
			}
		}
	}
	for k, v := range h.pending {
		if v != nil && strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	size := 0
	for i, k := range keys {
		v, _ := h.lookup(k)
		size += len(k) + len(v)
		if i == limit || i > 0 && size > h.maxListBytes {
			return keys[:i], vals
		}
		vals = append(vals, v)
	}
	return keys, vals
}

// hostServer serves schema.Host for a Host.
type hostServer struct{ h *Host }

func (s hostServer) Storage(ctx context.Context, call schema.Host_storage) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	c, r := revocable.New(capserver.New(schema.Storage_Methods(nil, storageServer(s)), nil, nil))
	s.h.mu.Lock()
	s.h.grants = append(s.h.grants, r)
	s.h.mu.Unlock()
	return res.SetStorage(schema.Storage(c))
}

func (s hostServer) Log(ctx context.Context, call schema.Host_log) error {
	t, _ := call.Args().Text() // a malformed line is logged empty, not refused
	s.h.mu.Lock()
	s.h.logs = append(s.h.logs, t)
	s.h.mu.Unlock()
	return nil
}

// storageServer serves schema.Storage for a Host.
type storageServer struct{ h *Host }

func (s storageServer) Get(ctx context.Context, call schema.Storage_get) error {
	k, err := call.Args().Key()
	if err != nil {
		return err
	}
	s.h.mu.Lock()
	v, ok := s.h.lookup(k)
	s.h.mu.Unlock()
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetFound(ok)
	if ok {
		return res.SetValue(v)
	}
	return nil
}

func (s storageServer) Put(ctx context.Context, call schema.Storage_put) error {
	k, err := call.Args().Key()
	if err != nil {
		return err
	}
	v, err := call.Args().Value()
	if err != nil {
		return err
	}
	// The value lives in the call's message, which is freed when this
	// handler returns; the transaction outlives it.
	return s.h.write(k, append([]byte{}, v...))
}

func (s storageServer) Delete(ctx context.Context, call schema.Storage_delete) error {
	k, err := call.Args().Key()
	if err != nil {
		return err
	}
	return s.h.write(k, nil)
}

func (s storageServer) List(ctx context.Context, call schema.Storage_list) error {
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
	if limit == 0 || limit > listLimit {
		limit = listLimit
	}
	s.h.mu.Lock()
	keys, vals := s.h.list(prefix, after, limit)
	s.h.listed += len(keys)
	s.h.mu.Unlock()

	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	l, err := res.NewEntries(int32(len(keys)))
	if err != nil {
		return err
	}
	for i, k := range keys {
		if err := l.At(i).SetKey(k); err != nil {
			return err
		}
		if err := l.At(i).SetValue(vals[i]); err != nil {
			return err
		}
	}
	return nil
}

package memhost

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/revocable"
	"github.com/gadgetd/gadgetd/internal/storage"
	"github.com/gadgetd/gadgetd/schema"
)

// Option configures a Host's storage limits (see storage.Limits).
type Option func(*storage.Limits)

// WithMaxKeyBytes sets the longest key a write may use.
func WithMaxKeyBytes(n int) Option { return func(l *storage.Limits) { l.MaxKeyBytes = n } }

// WithMaxValueBytes sets the largest value a write may store.
func WithMaxValueBytes(n int) Option { return func(l *storage.Limits) { l.MaxValueBytes = n } }

// WithMaxTotalBytes sets how many bytes of keys plus values the gadget may
// keep.
func WithMaxTotalBytes(n int) Option { return func(l *storage.Limits) { l.MaxTotalBytes = int64(n) } }

// WithMaxCallWrites sets how many keys one call may change.
func WithMaxCallWrites(n int) Option { return func(l *storage.Limits) { l.MaxCallWrites = n } }

// WithMaxCallBytes sets how many bytes one call's buffered writes may hold.
func WithMaxCallBytes(n int) Option { return func(l *storage.Limits) { l.MaxCallBytes = int64(n) } }

// WithMaxListBytes sets how many bytes of keys and values one Storage.list
// answers with (always at least one entry).
func WithMaxListBytes(n int) Option { return func(l *storage.Limits) { l.MaxListBytes = int64(n) } }

// Host is an in-memory schema.Host: the server's storage semantics
// (internal/storage) over a map, and a log. Its methods are safe for
// concurrent use.
type Host struct {
	mem  *backend
	data *storage.Data

	mu     sync.Mutex
	logs   []string
	grants []*revocable.Revoker // every Storage lent out, for RevokeAll
}

// New returns an empty Host.
func New(opts ...Option) *Host {
	var lim storage.Limits
	for _, o := range opts {
		o(&lim)
	}
	mem := &backend{Memory: storage.NewMemory()}
	return &Host{mem: mem, data: storage.New(mem, lim)}
}

// backend is the Memory a Host keeps its data in, counting what tests
// inspect and failing commits on demand.
type backend struct {
	*storage.Memory

	mu        sync.Mutex
	commitErr error
	commits   int
	listed    int
}

func (b *backend) List(ctx context.Context, prefix, after string, limit int, maxBytes int64) ([]storage.Entry, bool, error) {
	entries, more, err := b.Memory.List(ctx, prefix, after, limit, maxBytes)
	b.mu.Lock()
	b.listed += len(entries)
	b.mu.Unlock()
	return entries, more, err
}

func (b *backend) Commit(ctx context.Context, writes []storage.Write, maxSize int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.commitErr != nil {
		return b.commitErr
	}
	if err := b.Memory.Commit(ctx, writes, maxSize); err != nil {
		return err
	}
	b.commits++
	return nil
}

// gatekeeper: the test host has no bindings; every name is unbound, as for
// a gadget nobody bound anything to.
func (s hostServer) Gatekeeper(ctx context.Context, call schema.Host_gatekeeper) error {
	name, _ := call.Args().Name()
	return fmt.Errorf("no such binding %q", name)
}

// Client returns a new reference to the Host capability, to pass to
// wasmhost's Runtime.NewSandbox.
func (h *Host) Client() schema.Host {
	return schema.Host(capserver.New(schema.Host_Methods(nil, hostServer{h}), h, nil))
}

// Begin is a wasmhost.WithCallScope callback: see storage.Data.Begin.
func (h *Host) Begin() func(error) error { return h.data.Begin() }

// SetCommitErr makes every later commit fail with err, as a full disk
// would: the end of a call with writes, and a write outside a call scope.
// nil makes commits succeed again.
func (h *Host) SetCommitErr(err error) {
	h.mem.mu.Lock()
	h.mem.commitErr = err
	h.mem.mu.Unlock()
}

// Commits is how many commits have reached the data: the writes of a call,
// or one write made outside a call scope.
func (h *Host) Commits() int {
	h.mem.mu.Lock()
	defer h.mem.mu.Unlock()
	return h.mem.commits
}

// ListedEntries is how many entries Storage.list calls have read from the
// data in all, for checks of what a gadget's operation costs.
func (h *Host) ListedEntries() int {
	h.mem.mu.Lock()
	defer h.mem.mu.Unlock()
	return h.mem.listed
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
	v, found, _ := h.data.Get(context.Background(), key) // fails only when closed, or on a done context
	return bytes.Clone(v), found
}

// Put writes key as a gadget would, limits checked: at once outside a call
// scope, into the open call's transaction inside one.
func (h *Host) Put(key string, value []byte) error {
	return h.data.Put(context.Background(), key, value)
}

// Delete deletes key as a gadget would: at once outside a call scope, into
// the open call's transaction inside one.
func (h *Host) Delete(key string) error {
	return h.data.Delete(context.Background(), key)
}

// Committed returns a copy of the committed data.
func (h *Host) Committed() map[string][]byte { return h.mem.Snapshot() }

// Size is the size of the committed data: keys plus values, in bytes.
func (h *Host) Size() int {
	n, _ := h.mem.Size(context.Background()) // fails only on a done context
	return int(n)
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

// hostServer serves schema.Host for a Host.
type hostServer struct{ h *Host }

func (s hostServer) Storage(ctx context.Context, call schema.Host_storage) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	c, r := revocable.New(capserver.New(s.h.data.Methods(), nil, nil))
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

package notestest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/schema"
)

// Host limits, as schema/gadget.capnp documents them.
const (
	maxKeyBytes   = 512
	maxValueBytes = 1 << 20
)

// testHost is a Host for these tests, self-contained on purpose: storage in
// a map with the per-call transaction rule and the limits the server
// implements (keys, values, total bytes per gadget, checked at each write and
// reported with an error naming the limit), and a log. One testHost can back
// several Gadgets in turn, as one gadget's durable storage outlives its
// instances.
type testHost struct {
	maxTotal int // bytes of keys plus values the gadget may keep

	mu      sync.Mutex
	data    map[string][]byte
	size    int               // of data: keys plus values
	pending map[string][]byte // nil outside a call scope; nil value = delete
	logs    []string
	listed  int // entries returned by Storage.list, for cost checks
}

func newTestHost(maxTotal int) *testHost {
	return &testHost{maxTotal: maxTotal, data: map[string][]byte{}}
}

func (h *testHost) client() schema.Host {
	return schema.Host(capserver.New(schema.Host_Methods(nil, h), h, nil))
}

// begin is a wasmhost.WithCallScope callback: a call's writes commit when
// it succeeds and vanish when it fails.
func (h *testHost) begin() func(error) error {
	h.mu.Lock()
	h.pending = map[string][]byte{}
	h.mu.Unlock()
	return func(err error) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if err == nil {
			for k, v := range h.pending {
				h.apply(k, v)
			}
		}
		h.pending = nil
		return nil
	}
}

// lookup reads k as the current call sees it. h.mu must be held.
func (h *testHost) lookup(k string) ([]byte, bool) {
	if v, ok := h.pending[k]; ok {
		return v, v != nil
	}
	v, ok := h.data[k]
	return v, ok
}

func (h *testHost) get(k string) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lookup(k)
}

// committed returns a copy of the committed data.
func (h *testHost) committed() map[string][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[string][]byte, len(h.data))
	for k, v := range h.data {
		m[k] = v
	}
	return m
}

func (h *testHost) listedEntries() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.listed
}

func size(m map[string][]byte) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}

// total is the size of the data as the current call sees it. h.mu must be
// held.
func (h *testHost) total() int {
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

// set buffers one write (v nil deletes), enforcing the limits.
func (h *testHost) set(k string, v []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if v != nil {
		if len(k) > maxKeyBytes {
			return fmt.Errorf("storage limit: key is %d bytes, over the limit of %d", len(k), maxKeyBytes)
		}
		if len(v) > maxValueBytes {
			return fmt.Errorf("storage limit: value is %d bytes, over the limit of %d", len(v), maxValueBytes)
		}
		total := h.total() + len(k) + len(v)
		if old, ok := h.lookup(k); ok {
			total -= len(k) + len(old)
		}
		if total > h.maxTotal {
			return fmt.Errorf("storage limit: the gadget's data would take %d bytes, over its limit of %d bytes", total, h.maxTotal)
		}
	}
	if h.pending != nil {
		h.pending[k] = v
	} else {
		h.apply(k, v)
	}
	return nil
}

// apply commits one write. h.mu must be held.
func (h *testHost) apply(k string, v []byte) {
	if old, ok := h.data[k]; ok {
		h.size -= len(k) + len(old)
		delete(h.data, k)
	}
	if v != nil {
		h.data[k] = v
		h.size += len(k) + len(v)
	}
}

func (h *testHost) Storage(ctx context.Context, call schema.Host_storage) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetStorage(schema.Storage(capserver.New(schema.Storage_Methods(nil, testStorage{h}), nil, nil)))
}

func (h *testHost) Log(ctx context.Context, call schema.Host_log) error {
	t, _ := call.Args().Text()
	h.mu.Lock()
	h.logs = append(h.logs, t)
	h.mu.Unlock()
	return nil
}

type testStorage struct{ h *testHost }

func (s testStorage) Get(ctx context.Context, call schema.Storage_get) error {
	k, err := call.Args().Key()
	if err != nil {
		return err
	}
	v, ok := s.h.get(k)
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetFound(ok)
	return res.SetValue(v)
}

func (s testStorage) Put(ctx context.Context, call schema.Storage_put) error {
	k, err := call.Args().Key()
	if err != nil {
		return err
	}
	v, err := call.Args().Value()
	if err != nil {
		return err
	}
	return s.h.set(k, append([]byte{}, v...))
}

func (s testStorage) Delete(ctx context.Context, call schema.Storage_delete) error {
	k, err := call.Args().Key()
	if err != nil {
		return err
	}
	return s.h.set(k, nil)
}

func (s testStorage) List(ctx context.Context, call schema.Storage_list) error {
	prefix, _ := call.Args().Prefix()
	after, _ := call.Args().After()
	limit := int(call.Args().Limit())
	if limit == 0 || limit > 1000 {
		limit = 1000
	}
	s.h.mu.Lock()
	var keys []string
	for k := range s.h.data {
		if strings.HasPrefix(k, prefix) && k > after {
			if _, ok := s.h.pending[k]; !ok {
				keys = append(keys, k)
			}
		}
	}
	for k, v := range s.h.pending {
		if v != nil && strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > limit {
		keys = keys[:limit]
	}
	vals := make([][]byte, len(keys))
	for i, k := range keys {
		vals[i], _ = s.h.lookup(k)
	}
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

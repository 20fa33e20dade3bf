package wasmhost_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/revocable"
	"github.com/gadgetd/gadgetd/schema"
)

// memHost is a Host for tests: storage in a map with the same per-call
// transaction rule the server implements, and a log.
type memHost struct {
	mu      sync.Mutex
	data    map[string][]byte
	pending map[string][]byte // nil outside a call scope; nil value = delete
	logs    []string
	commits int
	// commitErr, when set, makes every commit with writes fail, as a
	// full disk would.
	commitErr error
	grants    []*revocable.Revoker // every Storage lent out, for revokeAll
}

// revokeAll cuts off every Storage capability this host has lent.
func (h *memHost) revokeAll() {
	h.mu.Lock()
	grants := h.grants
	h.grants = nil
	h.mu.Unlock()
	for _, r := range grants {
		r.Revoke(errors.New("gadget removed"))
	}
}

func newMemHost() *memHost { return &memHost{data: map[string][]byte{}} }

func (h *memHost) client() schema.Host {
	return schema.Host(capserver.New(schema.Host_Methods(nil, h), h, nil))
}

// begin is a wasmhost.WithCallScope callback.
func (h *memHost) begin() func(error) error {
	h.mu.Lock()
	h.pending = map[string][]byte{}
	h.mu.Unlock()
	return func(err error) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if err == nil && len(h.pending) > 0 && h.commitErr != nil {
			h.pending = nil
			return h.commitErr
		}
		if err == nil {
			for k, v := range h.pending {
				if v == nil {
					delete(h.data, k)
				} else {
					h.data[k] = v
				}
			}
			h.commits++
		}
		h.pending = nil
		return nil
	}
}

func (h *memHost) get(k string) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if v, ok := h.pending[k]; ok {
		return v, v != nil
	}
	v, ok := h.data[k]
	return v, ok
}

func (h *memHost) set(k string, v []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending != nil {
		h.pending[k] = v
	} else if v == nil {
		delete(h.data, k)
	} else {
		h.data[k] = v
	}
}

func (h *memHost) Storage(ctx context.Context, call schema.Host_storage) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	c, r := revocable.New(capserver.New(schema.Storage_Methods(nil, memStorage{h}), nil, nil))
	h.mu.Lock()
	h.grants = append(h.grants, r)
	h.mu.Unlock()
	return res.SetStorage(schema.Storage(c))
}

func (h *memHost) Log(ctx context.Context, call schema.Host_log) error {
	t, _ := call.Args().Text()
	h.mu.Lock()
	h.logs = append(h.logs, t)
	h.mu.Unlock()
	return nil
}

type memStorage struct{ h *memHost }

func (s memStorage) Get(ctx context.Context, call schema.Storage_get) error {
	k, _ := call.Args().Key()
	v, ok := s.h.get(k)
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetFound(ok)
	return res.SetValue(v)
}

func (s memStorage) Put(ctx context.Context, call schema.Storage_put) error {
	k, _ := call.Args().Key()
	v, _ := call.Args().Value()
	s.h.set(k, append([]byte{}, v...))
	return nil
}

func (s memStorage) Delete(ctx context.Context, call schema.Storage_delete) error {
	k, _ := call.Args().Key()
	s.h.set(k, nil)
	return nil
}

func (s memStorage) List(ctx context.Context, call schema.Storage_list) error {
	prefix, _ := call.Args().Prefix()
	s.h.mu.Lock()
	var keys []string
	for k := range s.h.data {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	s.h.mu.Unlock()
	sort.Strings(keys)
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	l, err := res.NewEntries(int32(len(keys)))
	if err != nil {
		return err
	}
	for i, k := range keys {
		v, _ := s.h.get(k)
		l.At(i).SetKey(k)
		l.At(i).SetValue(v)
	}
	return nil
}

package storage

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Memory is a Store that keeps the data in a map, for tests. It follows
// Store's contract as the server's bbolt backend does, including Commit's
// quota. The zero value is not usable; call NewMemory.
type Memory struct {
	mu   sync.Mutex
	data map[string][]byte
	size int64 // the EntrySize of data
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{data: map[string][]byte{}} }

func (m *Memory) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.data[key]
	if !ok {
		return nil, false, nil
	}
	return append([]byte{}, v...), true, nil
}

func (m *Memory) List(ctx context.Context, prefix, after string, limit int, maxBytes int64) (entries []Entry, more bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for k := range m.data {
		if strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var size int64
	for _, k := range keys {
		n := EntrySize(k, m.data[k])
		if len(entries) == limit || len(entries) > 0 && size+n > maxBytes {
			return entries, true, nil
		}
		entries = append(entries, Entry{Key: k, Value: append([]byte{}, m.data[k]...)})
		size += n
	}
	return entries, false, nil
}

func (m *Memory) Size(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.size, nil
}

func (m *Memory) Commit(ctx context.Context, writes []Write, maxSize int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// Apply to a copy of what the writes touch, so that a refused commit
	// changes nothing.
	touched := make(map[string][]byte, len(writes))
	size := m.size
	for _, w := range writes {
		old, ok := touched[w.Key] // nil: deleted by an earlier write
		if !ok {
			old = m.data[w.Key]
		}
		if old != nil {
			size -= EntrySize(w.Key, old)
		}
		if w.Delete {
			touched[w.Key] = nil
			continue
		}
		touched[w.Key] = append([]byte{}, w.Value...)
		size += EntrySize(w.Key, w.Value)
	}
	if err := CheckQuota(m.size, size, maxSize); err != nil {
		return err
	}
	for k, v := range touched {
		if v == nil {
			delete(m.data, k)
		} else {
			m.data[k] = v
		}
	}
	m.size = size
	return nil
}

// Snapshot returns a copy of the data.
func (m *Memory) Snapshot() map[string][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := maps.Clone(m.data)
	for k, v := range out {
		out[k] = append([]byte{}, v...)
	}
	return out
}

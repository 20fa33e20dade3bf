package wasmhost

import (
	"fmt"
	"sync"
)

// linearMemory is one instance's linear memory, mapped outside the Go heap
// and charged to the Runtime's memory budget (liveSet.charge) as it grows.
//
// wazero's own linear memory is a Go slice that grows by append: every
// memory.grow past its capacity copies, and the old copy stays until Go's GC
// runs, so a guest growing to its limit cost up to 2.5 times that limit. A
// mapping grows in place or moves without copying (mremap), and costs what
// the guest touched.
//
// Goroutines: Reallocate runs on the goroutine that runs the guest: the
// gadget's worker, or for a pooled instance the pool's (pool.go), inside
// the guest's memory.grow or at instantiation. Free runs wherever the module
// is closed: there, or on wazero's goroutine that closes a module whose
// context ended, or in Gadget.abandon, while guest code may still be running
// on the worker. So Free only discards the pages (they read as zero if
// touched again) and returns their budget; the mapping itself is unmapped
// in instance.close, by whoever owns the instance, once no guest code can
// run. Both reach the budget through the instance's rt and held, which never
// change; whom held charges changes only under the liveSet's lock.
type linearMemory struct {
	inst *instance

	mu      sync.Mutex
	buf     []byte // the mapping, len = the memory's size; nil once unmapped
	charged uint64 // bytes charged to the budget
	freed   bool
}

// Reallocate implements experimental.LinearMemory. It returns nil, which
// fails the guest's memory.grow, when the budget or the owner's share of it
// has no room even after evicting idle instances.
func (m *linearMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	have, charged, first := uint64(len(m.buf)), m.charged, m.buf == nil
	m.mu.Unlock()
	if size <= have && !first {
		return m.buf[:size]
	}
	live, held := &m.inst.rt.live, m.inst.held
	var more uint64
	if size > charged {
		more = size - charged
		// The first allocation was reserved by instantiate, and wazero
		// panics if it fails.
		if bound := live.charge(held, more, m.inst.ctx, first); bound != withinBounds {
			m.inst.refused = bound
			return nil
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	buf, err := remapMemory(m.buf, size)
	if m.freed || err != nil {
		live.uncharge(held, more)
		return nil
	}
	m.buf, m.charged = buf, max(charged, size)
	return m.buf
}

// Free implements experimental.LinearMemory: it releases the memory's pages
// and budget, and may run while the guest runs (see linearMemory).
func (m *linearMemory) Free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return
	}
	m.freed = true
	discardMemory(m.buf)
	m.inst.rt.live.uncharge(m.inst.held, m.charged)
	m.charged = 0
}

// unmap frees the mapping. Only the worker calls it, after the module is
// closed.
func (m *linearMemory) unmap() {
	if m == nil {
		return
	}
	m.Free()
	m.mu.Lock()
	defer m.mu.Unlock()
	unmapMemory(m.buf)
	m.buf = nil
}

// maxRetainedStack is the most native stack an instance keeps between calls.
// A deeper one is dropped with the api.Function that holds it (see
// nativeStackBytes); the next call gets a fresh function and a small stack.
const maxRetainedStack = 1 << 20

// reserveMemory charges the memory the guest declares it starts with, so an
// instance that cannot fit in the budget, or in its owner's share, is
// refused before it starts.
func (inst *instance) reserveMemory() error {
	inst.linear = &linearMemory{inst: inst}
	var need uint64
	if m, ok := inst.g.mod.cm.ExportedMemories()["memory"]; ok {
		need = uint64(m.Min()) * wasmPageSize
	}
	if bound := inst.rt.live.charge(inst.held, need, inst.ctx, false); bound != withinBounds {
		inst.refused = bound
		return cannotStart(inst.g, need, bound)
	}
	inst.linear.charged = need
	return nil
}

// cannotStart is the error for gadget g's instance that needs bytes the
// budget, or its owner's share of it (bound), has no room for.
func cannotStart(g *Sandbox, need uint64, bound memoryBound) error {
	return fmt.Errorf("%s cannot start: it needs %d MiB of memory, and %s", g.cfg.name, need>>20, bound.busyHolders(&g.rt.cfg))
}

// settle runs after guest code: it drops a native stack grown past
// maxRetainedStack, charges the budget for the tables and stacks the
// instance keeps, and stops an instance whose linear memory and tables
// together exceed its memory limit.
func (inst *instance) settle() error {
	if nativeStackBytes(inst.fn.deliver) > maxRetainedStack {
		inst.fn.deliver = inst.mod.ExportedFunction(exportDeliver)
	}
	if nativeStackBytes(inst.fn.alloc) > maxRetainedStack {
		inst.fn.alloc = inst.mod.ExportedFunction(exportAlloc)
	}
	tables := tableBytes(inst.mod)
	held := tables + nativeStackBytes(inst.fn.deliver) + nativeStackBytes(inst.fn.alloc)
	live := &inst.rt.live
	if held > inst.charged {
		live.charge(inst.held, held-inst.charged, inst.ctx, true)
	} else {
		live.uncharge(inst.held, inst.charged-held)
	}
	inst.charged = held
	if linear := uint64(inst.mod.Memory().Size()); linear+tables > inst.g.rt.cfg.memoryLimit {
		err := fmt.Errorf("%s holds %d KiB of linear memory and %d KiB of tables, over its memory limit of %d KiB, and was stopped",
			inst.g.cfg.name, linear>>10, tables>>10, inst.g.rt.cfg.memoryLimit>>10)
		if inst.fatal == nil {
			inst.fatal = err
		}
		return err
	}
	return nil
}

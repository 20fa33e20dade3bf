package rpcguard

// Design: exportTable mirrors the reference counts rpc.Conn keeps in its
// export table for one peer, from the messages that cross the transport, so
// the transport can bound it (rpc.Conn has no limit and no accessor). It
// follows go-capnp v3.1.0-alpha.2's rules: every capability descriptor the
// server sends as senderHosted or senderPromise adds a reference; a Release
// from the peer drops referenceCount; a Finish with releaseResultCaps drops
// the references its Return carried (at once if the Return went out
// first, else when it does). go-capnp ignores releaseParamCaps, so the
// capabilities in the server's own calls stay until the peer releases
// them. It is touched by the send goroutine (outgoing messages) and the
// reader (Release, Finish), under its own mutex.

import (
	"fmt"
	"sync"

	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"
)

type exportTable struct {
	mu        sync.Mutex
	refs      map[uint32]uint32   // export id -> references the peer holds
	results   map[uint32][]uint32 // answer id -> exports its Return carried (maybe none), until its Finish
	finishing map[uint32]bool     // answers finished before their Return: releaseResultCaps
}

func newExportTable() exportTable {
	return exportTable{refs: map[uint32]uint32{}, results: map[uint32][]uint32{}, finishing: map[uint32]bool{}}
}

// countExports records the capabilities m hands the peer and refuses m if
// the peer would then hold more than MaxExports of them.
func (t *Transport) countExports(m rpccp.Message) error {
	var payload rpccp.Payload
	answer, isReturn := uint32(0), false
	switch m.Which() {
	case rpccp.Message_Which_call:
		c, err := m.Call()
		if err != nil {
			return nil
		}
		if payload, err = c.Params(); err != nil {
			return nil
		}
	case rpccp.Message_Which_return:
		r, err := m.Return()
		if err != nil || r.Which() != rpccp.Return_Which_results {
			if err == nil {
				t.exports.returned(r.AnswerId(), nil)
			}
			return nil
		}
		if payload, err = r.Results(); err != nil {
			return nil
		}
		answer, isReturn = r.AnswerId(), true
	case rpccp.Message_Which_resolve:
		r, err := m.Resolve()
		if err != nil || r.Which() != rpccp.Resolve_Which_cap {
			return nil
		}
		d, err := r.Cap()
		if err != nil {
			return nil
		}
		return t.exports.add(exported(nil, d), t.lim.MaxExports)
	default:
		return nil
	}
	var ids []uint32
	if caps, err := payload.CapTable(); err == nil {
		for i := 0; i < caps.Len(); i++ {
			ids = exported(ids, caps.At(i))
		}
	}
	if err := t.exports.add(ids, t.lim.MaxExports); err != nil {
		return err
	}
	if isReturn {
		t.exports.returned(answer, ids)
	}
	return nil
}

// exported appends the export id d hands the peer, if it hands one.
func exported(ids []uint32, d rpccp.CapDescriptor) []uint32 {
	switch d.Which() {
	case rpccp.CapDescriptor_Which_senderHosted:
		return append(ids, d.SenderHosted())
	case rpccp.CapDescriptor_Which_senderPromise:
		return append(ids, d.SenderPromise())
	}
	return ids
}

// add takes a reference on each of ids, unless that would make the peer
// hold more than max distinct exports.
func (e *exportTable) add(ids []uint32, max int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	fresh := 0
	for _, id := range ids {
		if e.refs[id] == 0 {
			fresh++
		}
	}
	if len(e.refs)+fresh > max {
		return fmt.Errorf("%w: the peer holds %d of the server's capabilities, the limit is %d; release some", ErrLimit, len(e.refs), max)
	}
	for _, id := range ids {
		e.refs[id]++
	}
	return nil
}

// release drops n references to id. The caller holds mu.
func (e *exportTable) release(id, n uint32) {
	if e.refs[id] <= n {
		delete(e.refs, id)
	} else {
		e.refs[id] -= n
	}
}

// released records a Release from the peer.
func (e *exportTable) released(id, n uint32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.release(id, n)
}

// returned records the exports the Return for answer carried.
func (e *exportTable) returned(answer uint32, ids []uint32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	release, finished := e.finishing[answer]
	delete(e.finishing, answer)
	switch {
	case finished && release:
		for _, id := range ids {
			e.release(id, 1)
		}
	case !finished:
		e.results[answer] = ids
	}
}

// finished records the peer's Finish for answer.
func (e *exportTable) finished(answer uint32, releaseResultCaps bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ids, returned := e.results[answer]
	if !returned {
		e.finishing[answer] = releaseResultCaps
		return
	}
	delete(e.results, answer)
	if releaseResultCaps {
		for _, id := range ids {
			e.release(id, 1)
		}
	}
}

package server

// Design: one gadgetStorage per live gadget serves every Storage capability
// of that gadget; the semantics (per-call transactions, limits, the list
// budget) are internal/storage's, over the gadget's data in the store. What
// is the server's: the registry of storages per gadget (Server.storages), so
// that removeGadget can close them all before it deletes the data; the log
// line a failed commit leaves; and peerStorage, which makes a delegated
// client's calls transactions of their own.

import (
	"context"
	"errors"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/storage"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

type gadgetStorage struct {
	s    *Server
	id   string
	data *storage.Data
	logs *logRing // where a failed commit is reported
}

// storageLimits returns the per-gadget storage limits the options set.
func (c config) storageLimits() storage.Limits {
	return storage.Limits{
		MaxKeyBytes:   c.maxKeySize,
		MaxValueBytes: c.maxValueSize,
		MaxTotalBytes: c.maxStorageSize,
		MaxCallWrites: c.maxCallWrites,
		MaxCallBytes:  c.maxCallBytes,
		MaxListBytes:  c.maxListBytes,
	}
}

// newGadgetStorageLocked returns a new storage for gadget id, registered in
// Server.storages until Shutdown. Callers hold Server.mu.
func (s *Server) newGadgetStorageLocked(id string, logs *logRing) *gadgetStorage {
	st := &gadgetStorage{s: s, id: id, logs: logs, data: storage.New(store.GadgetData(s.store, id), s.cfg.storageLimits())}
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

// begin opens the scope of one call, for wasmhost.WithCallScope; the
// returned end commits or discards (storage.Data.Begin) and reports a
// commit that failed.
func (st *gadgetStorage) begin() func(error) error {
	end := st.data.Begin()
	return func(callErr error) error {
		err := end(callErr)
		if err != nil && !errors.Is(err, storage.ErrRemoved) {
			st.s.cfg.logger.Error("committing gadget storage failed; the call fails", "gadget", st.id, "err", err)
			st.logs.keep(schema.LogLevel_error, "storage commit failed; the call that made these writes failed: "+err.Error())
		}
		return err
	}
}

// close makes every later use of st fail; see storage.Data.Close.
func (st *gadgetStorage) close() { st.data.Close() }

// capability returns a new Storage capability for st, as Host.storage
// hands it out.
func (st *gadgetStorage) capability() schema.Storage {
	srv := capserver.New(st.data.Methods(), st, st)
	return schema.Storage(capnp.NewClient(&peerStorage{storage: srv}))
}

// peerStorage is the Storage capability a gadget's Host hands out. A gadget
// may delegate it to a client, and a client's call must not join the call
// the guest is running: it would see that call's unsaved writes, and its
// own writes would commit or vanish with it. go-capnp delivers a call that
// arrives over a connection through Recv and an in-process call (the
// guest's own, which wasmhost makes with SendCall) through Send, so Recv
// marks its context with storage.OwnTransaction. Both forward straight to
// the Storage server, with its brand.
type peerStorage struct{ storage capnp.Client }

func (p *peerStorage) Send(ctx context.Context, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
	return p.storage.SendCall(ctx, s)
}

func (p *peerStorage) Recv(ctx context.Context, r capnp.Recv) capnp.PipelineCaller {
	return p.storage.RecvCall(storage.OwnTransaction(ctx), r)
}

func (p *peerStorage) Brand() capnp.Brand {
	snap := p.storage.Snapshot()
	defer snap.Release()
	return snap.Brand()
}

func (p *peerStorage) Shutdown() { p.storage.Release() }

func (p *peerStorage) String() string { return "peer-aware " + p.storage.String() }

package server

// Design: one gadgetStorage per live gadget serves every Storage capability
// of that gadget; the semantics (per-call transactions, limits, the list
// budget) are internal/storage's, over the gadget's data in the store. What
// is the server's: the registry of storages per gadget (Server.storages), so
// that removeGadget can close them all before it deletes the data; the log
// line a failed commit leaves; and peerStorage, which lets only the
// gadget's own guest join its calls' transactions: everyone it delegated the
// capability to (a client, another gadget's guest) gets transactions of
// their own.
//
// Goroutines: an in-process call (the guest's, from its sandbox's worker,
// or another gadget's guest's, from that gadget's worker) is served on the
// caller's goroutine (storage.Data.Serve through capserver.SendDirect); a
// call over a connection goes through go-capnp's server and its goroutine.
// Data orders them all with its own lock, so a guest's call may wait there
// behind a delegated caller's commit, as its own commit at the end of the
// call may (both within storage.CommitTimeout).
// Storage calls never call back into a gadget, so serving one on the worker
// cannot deadlock it. Removal reaches both paths: Data.Close fails whatever
// comes after it, however it arrives.

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
	return schema.Storage(capnp.NewClient(&peerStorage{storage: srv, data: st.data}))
}

// guestKey marks the context of every call a gadget's own guest makes: its
// value is the gadget's storage.Data.
type guestKey struct{}

// guestValues is what the gadget's sandbox gives every call its guest makes
// (wasmhost.WithContextValues): the mark by which st's capability tells the
// guest's own calls from everyone else's.
func (st *gadgetStorage) guestValues() context.Context {
	return context.WithValue(context.Background(), guestKey{}, st.data)
}

// peerStorage is the Storage capability a gadget's Host hands out. The
// guest may delegate it: to a client, and through the client to another
// gadget. Only the guest's own calls, made from inside a call delivered
// into it, belong to that call's transaction; anyone else's call must not
// join it, or it would see the call's unsaved writes, and its own writes
// would commit or vanish with that call. So every call is a transaction of
// its own (storage.OwnTransaction) unless its context carries this gadget's
// guest mark (guestValues), which wasmhost puts on every call a guest makes
// and on nothing else. How a call arrives does not decide: another gadget's
// guest, or the kernel, calls in process (Send) just as the guest does;
// only a call over a connection (Recv) can never be the guest's. Send
// serves a call at once on the caller's goroutine (the guest's worker, for
// the guest's own); Recv forwards to the Storage server. Both answer with
// the server's brand.
type peerStorage struct {
	storage capnp.Client // the Storage server, for calls over connections
	data    *storage.Data
}

func (p *peerStorage) Send(ctx context.Context, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
	if ctx.Value(guestKey{}) != p.data {
		ctx = storage.OwnTransaction(ctx)
	}
	return capserver.SendDirect(s, func(args capnp.Struct, results *capnp.Segment) (capnp.Struct, error) {
		return p.data.Serve(ctx, s.Method, args, results)
	})
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

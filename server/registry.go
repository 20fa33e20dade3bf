package server

// Design: modules and live gadgets are created on first use and cached in
// Server.modules and Server.live (guarded by Server.mu).
//
// Compiling a module can take a while, so it happens outside Server.mu; each
// moduleEntry has its own once-lock so concurrent first uses compile once,
// and a failed compile is not cached. A liveGadget is published under
// Server.mu after re-reading the gadget's record, and removeGadget deletes
// the record and closes the sandbox under the same lock: so a gadget removed
// while someone opens it never comes back to life with a sandbox (and its
// storage writes) of its own.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server/internal/store"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// blueprintKey names one installed blueprint version.
type blueprintKey struct{ owner, name, version string }

func keyOf(g store.Gadget) blueprintKey {
	return blueprintKey{g.BlueprintOwner, g.BlueprintName, g.BlueprintVersion}
}

// moduleEntry is one compiled blueprint version, compiled at most once at a
// time.
type moduleEntry struct {
	mu  sync.Mutex
	mod *wasmhost.Module // nil until compiled
}

// module returns the compiled module of blueprint k.
func (s *Server) module(ctx context.Context, k blueprintKey) (*wasmhost.Module, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	e := s.modules[k]
	if e == nil {
		e = &moduleEntry{}
		s.modules[k] = e
	}
	s.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mod != nil {
		return e.mod, nil
	}
	bp, err := s.store.Blueprint(ctx, k.owner, k.name, k.version)
	if err != nil {
		return nil, fmt.Errorf("loading blueprint %s %s: %w", k.name, k.version, err)
	}
	mod, err := s.rt.Compile(ctx, bp.Wasm)
	if err != nil {
		return nil, fmt.Errorf("blueprint %s %s: %w", k.name, k.version, err)
	}
	e.mod = mod
	return mod, nil
}

// setModule caches a module compiled during installation; an older module of
// the same key (a replaced builtin) stays alive for the gadgets using it
// until the server stops.
func (s *Server) setModule(k blueprintKey, mod *wasmhost.Module) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		mod.Close(context.Background())
		return
	}
	if old := s.modules[k]; old != nil && old.mod != nil {
		s.retired = append(s.retired, old.mod)
	}
	s.modules[k] = &moduleEntry{mod: mod}
}

// errUnknownGadget is the answer for an id that does not exist and for one
// that belongs to someone else: the two must be indistinguishable.
func errUnknownGadget(id string) error { return fmt.Errorf("unknown gadget id %q", id) }

// gadgetFor returns the record of gadget id if user may reach it.
func (s *Server) gadgetFor(ctx context.Context, user store.User, id string) (store.Gadget, error) {
	g, err := s.store.Gadget(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && g.OwnerID != user.ID {
		return store.Gadget{}, errUnknownGadget(id)
	}
	return g, err
}

// liveGadget is a gadget with a sandbox: its Host, Storage and log.
type liveGadget struct {
	id      string
	sandbox *wasmhost.Gadget
	storage *gadgetStorage
	logs    *logRing
}

func (lg *liveGadget) close() {
	lg.storage.close()
	lg.sandbox.Close()
}

// liveFor returns the running gadget of record g, starting its sandbox if
// needed.
func (s *Server) liveFor(ctx context.Context, g store.Gadget) (*liveGadget, error) {
	s.mu.Lock()
	lg := s.live[g.ID]
	s.mu.Unlock()
	if lg != nil {
		return lg, nil
	}
	mod, err := s.module(ctx, keyOf(g))
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if lg := s.live[g.ID]; lg != nil {
		return lg, nil // someone else started it meanwhile
	}
	if _, err := s.store.Gadget(ctx, g.ID); err != nil {
		return nil, errUnknownGadget(g.ID) // removed meanwhile
	}
	logs := newLogRing(s.cfg.logLines, s.cfg.logLineSize)
	lg = &liveGadget{id: g.ID, storage: newGadgetStorage(s, g.ID, logs), logs: logs}
	h := newHost(lg)
	hostCap := schema.Host(capserver.New(schema.Host_Methods(nil, h), h, h))
	lg.sandbox = s.rt.NewGadget(mod, hostCap, wasmhost.WithName(g.ID), wasmhost.WithCallScope(lg.storage.begin))
	s.live[g.ID] = lg
	return lg, nil
}

// logsOf returns the log of gadget id, or nil if it has not run since the
// server started.
func (s *Server) logsOf(id string) *logRing {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lg := s.live[id]; lg != nil {
		return lg.logs
	}
	return nil
}

// removeGadget kills the gadget's sandbox, which breaks every session opened
// from it, and deletes it with its data.
func (s *Server) removeGadget(ctx context.Context, id string) error {
	s.mu.Lock()
	lg := s.live[id]
	if lg != nil {
		delete(s.live, id)
		// From here on the gadget's storage refuses writes, so a call
		// still running cannot recreate the data deleted below.
		lg.storage.close()
	}
	err := s.store.DeleteGadget(ctx, id)
	s.mu.Unlock()
	if lg != nil {
		lg.sandbox.Close() // waits for a running call; not under s.mu
	}
	return err
}

// newestBlueprint returns the newest version of blueprint name that user can
// use: their own installation if they have one, else the builtin.
func (s *Server) newestBlueprint(ctx context.Context, user store.User, name string) (store.Blueprint, error) {
	for _, owner := range []string{user.ID, ""} {
		all, err := s.store.Blueprints(ctx, owner)
		if err != nil {
			return store.Blueprint{}, err
		}
		var newest *store.Blueprint
		for i := range all {
			if all[i].Name == name && (newest == nil || all[i].Seq > newest.Seq) {
				newest = &all[i]
			}
		}
		if newest != nil {
			return *newest, nil
		}
	}
	return store.Blueprint{}, fmt.Errorf("unknown blueprint %q", name)
}

// visibleBlueprints returns the newest version of each blueprint user can
// use, by name; the user's own shadow builtins of the same name.
func (s *Server) visibleBlueprints(ctx context.Context, user store.User) ([]store.Blueprint, error) {
	newest := map[string]store.Blueprint{}
	for _, owner := range []string{"", user.ID} {
		all, err := s.store.Blueprints(ctx, owner)
		if err != nil {
			return nil, err
		}
		byName := map[string]store.Blueprint{}
		for _, bp := range all {
			if cur, ok := byName[bp.Name]; !ok || bp.Seq > cur.Seq {
				byName[bp.Name] = bp
			}
		}
		for n, bp := range byName {
			newest[n] = bp
		}
	}
	out := make([]store.Blueprint, 0, len(newest))
	for _, bp := range newest {
		out = append(out, bp)
	}
	slices.SortFunc(out, func(a, b store.Blueprint) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

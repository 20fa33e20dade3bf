package server

// Design: compiled modules and live gadgets are created on first use and
// kept in Server.modules and Server.live (guarded by Server.mu), and both
// are let go again when unused, so what an idle server holds returns to its
// baseline.
//
// Compiling a module can take a while, so it happens outside Server.mu; each
// moduleEntry has its own lock so concurrent first uses compile once, and a
// failed compile is not cached. Every live gadget holds a use of its module
// (moduleEntry.users); a module nobody uses is idle, and past
// WithMaxIdleModules the least recently used idle module is closed and
// dropped from the map, to be compiled again (from the compilation cache)
// on next use. A replaced builtin's old module is closed when its last user
// goes. Making a module live is charged to the gadget's owner, and loaded
// modules count against a total (modulebudget.go): past the total, idle
// modules are freed beyond WithMaxIdleModules too.
//
// A liveGadget is published under Server.mu after re-reading the gadget's
// record, and removeGadget deletes the record and closes the gadget's
// storage under the same lock: so a gadget removed while someone opens it
// never comes back to life with a sandbox (and its storage writes) of its
// own. shells.go lets idle live gadgets go.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// blueprintKey names one installed blueprint version.
type blueprintKey struct{ owner, name, version string }

func keyOf(g store.GadgetRecord) blueprintKey {
	return blueprintKey{g.BlueprintOwner, g.BlueprintName, g.BlueprintVersion}
}

// moduleEntry is one compiled blueprint version, compiled at most once at a
// time.
type moduleEntry struct {
	mu       sync.Mutex
	mod      *wasmhost.Module // nil until compiled; guarded by mu
	wasmSize int              // bytes of the module's wasm, once known; guarded by mu

	// Guarded by Server.mu.
	users    int            // live gadgets using mod, and compiles in progress
	lastUsed time.Time      // when users last dropped to 0
	retired  bool           // replaced in Server.modules; close mod when unused
	cost     int64          // estimated bytes of compiled code, once compiled (modulebudget.go)
	holders  map[string]int // users charged for mod: their live gadgets' uses
}

// moduleUse is one use of a compiled module, charged to the user whose
// gadget made it live.
type moduleUse struct {
	entry *moduleEntry
	user  string
}

// module returns the compiled module of blueprint k, with one use held for
// the caller and charged to user; the caller gives it back with
// releaseModule. Past user's or the server's budget for compiled code it
// fails with an overloaded exception naming the limit.
func (s *Server) module(ctx context.Context, k blueprintKey, user string) (*moduleUse, error) {
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
	e.users++
	s.mu.Unlock()

	wasmSize, err := s.compile(ctx, k, e)
	if err != nil {
		s.mu.Lock()
		unused := s.releaseLocked(e)
		s.mu.Unlock()
		closeModules(unused)
		return nil, err
	}
	s.mu.Lock()
	e.cost = moduleCost(k.owner, wasmSize)
	unused, err := s.chargeModuleLocked(e, user)
	if err != nil {
		unused = append(unused, s.releaseLocked(e)...)
	}
	s.mu.Unlock()
	closeModules(unused)
	if err != nil {
		return nil, err
	}
	return &moduleUse{entry: e, user: user}, nil
}

// compile fills e.mod unless it is already there, and returns the size of
// its wasm. A user's module compiled at installation (setModule) has its
// size read here on first use.
func (s *Server) compile(ctx context.Context, k blueprintKey, e *moduleEntry) (wasmSize int, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mod != nil && (e.wasmSize > 0 || k.owner == "") {
		return e.wasmSize, nil
	}
	bp, err := s.store.Blueprint(ctx, k.owner, k.name, k.version)
	if err != nil {
		return 0, fmt.Errorf("loading blueprint %s %s: %w", k.name, k.version, err)
	}
	e.wasmSize = len(bp.Wasm)
	if e.mod != nil {
		return e.wasmSize, nil
	}
	mod, err := s.rt.Compile(ctx, bp.Wasm, compileOptions(k.owner)...)
	if err != nil {
		return 0, fmt.Errorf("blueprint %s %s: %w", k.name, k.version, err)
	}
	e.mod = mod
	return e.wasmSize, nil
}

// releaseModule gives back a use of a module, and frees the modules nobody
// needs.
func (s *Server) releaseModule(u *moduleUse) {
	s.mu.Lock()
	u.entry.unchargeLocked(u.user)
	unused := s.releaseLocked(u.entry)
	s.mu.Unlock()
	closeModules(unused)
}

// releaseLocked gives back a use of e, and returns the modules nobody needs
// for closing outside the lock. Callers hold Server.mu.
func (s *Server) releaseLocked(e *moduleEntry) []*moduleEntry {
	e.users--
	if e.users == 0 {
		e.lastUsed = time.Now()
	}
	unused := s.unusedModulesLocked()
	if e.users == 0 && e.retired {
		unused = append(unused, e)
	}
	return unused
}

// setModule caches a module compiled during installation. An older module
// of the same key (a replaced builtin) stays alive for the gadgets using it,
// and is closed when the last of them goes.
func (s *Server) setModule(k blueprintKey, mod *wasmhost.Module) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		mod.Close(context.Background())
		return
	}
	var unused []*moduleEntry
	if old := s.modules[k]; old != nil {
		if old.users == 0 {
			unused = append(unused, old)
		} else {
			old.retired = true
		}
	}
	s.modules[k] = &moduleEntry{mod: mod, lastUsed: time.Now()}
	unused = append(unused, s.unusedModulesLocked()...)
	s.mu.Unlock()
	closeModules(unused)
}

// unusedModulesLocked removes from Server.modules the idle modules past
// WithMaxIdleModules, or while all loaded modules cost more than the
// budget's total, least recently used first, and returns them for closing
// outside the lock. Callers hold Server.mu.
func (s *Server) unusedModulesLocked() []*moduleEntry {
	var idle []*moduleEntry
	var total int64
	for k, e := range s.modules {
		total += e.cost
		if e.users > 0 {
			continue
		}
		if e.mod == nil { // a failed compile: nothing to keep
			delete(s.modules, k)
			continue
		}
		idle = append(idle, e)
	}
	slices.SortFunc(idle, func(a, b *moduleEntry) int { return a.lastUsed.Compare(b.lastUsed) })
	n := 0
	for ; n < len(idle) && (len(idle)-n > s.cfg.maxIdleModules || total > s.cfg.modules.total); n++ {
		total -= idle[n].cost
	}
	idle = idle[:n]
	for k, e := range s.modules {
		if slices.Contains(idle, e) {
			delete(s.modules, k)
		}
	}
	return idle
}

// closeModules frees the compiled code of modules no gadget uses any more.
// Nobody else can reach them: they are out of Server.modules with no users.
func closeModules(es []*moduleEntry) {
	for _, e := range es {
		e.mu.Lock()
		if e.mod != nil {
			e.mod.Close(context.Background())
			e.mod = nil
		}
		e.mu.Unlock()
	}
}

// errUnknownGadget is the answer for an id that does not exist and for one
// that belongs to someone else: the two must be indistinguishable.
// errUnknownGadget names the id it was asked for, cut short: a client
// should not get back megabytes of an id it made up.
func errUnknownGadget(id string) error {
	const show = 64
	if len(id) > show {
		id = id[:show] + "…"
	}
	return fmt.Errorf("unknown gadget id %q", id)
}

// gadgetFor returns gadget id as user reaches it (owned or shared with
// them), with their role, if they may.
func (s *Server) gadgetFor(ctx context.Context, user store.User, id string) (store.GadgetAccess, error) {
	a, err := s.store.Access(ctx, id, user.ID)
	if errors.Is(err, store.ErrNotFound) {
		return store.GadgetAccess{}, errUnknownGadget(id)
	}
	return a, err
}

// liveGadget is a gadget with a sandbox: its Host, Storage and log. shells.go
// says when it is let go.
type liveGadget struct {
	id      string
	owner   string     // user id
	module  *moduleUse // held until the sandbox is closed
	sandbox *sandbox
	storage *gadgetStorage
	logs    *logRing
	use     shellUse
}

// liveFor returns the running gadget of record g, starting its sandbox if
// needed.
func (s *Server) liveFor(ctx context.Context, g store.GadgetRecord) (*liveGadget, error) {
	s.mu.Lock()
	lg := s.live[g.ID]
	if lg != nil {
		// Under s.mu, so the sweeper cannot let it go in between.
		lg.use.touch()
	}
	s.mu.Unlock()
	if lg != nil {
		return lg, nil
	}
	u, err := s.module(ctx, keyOf(g), g.OwnerID)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	lg, started, err := s.startLocked(ctx, g, u)
	s.mu.Unlock()
	if !started {
		s.releaseModule(u) // failed, or someone else started it meanwhile
	}
	return lg, err
}

// startLocked publishes the live gadget of g, unless someone else did or the
// gadget is gone. Callers hold Server.mu.
func (s *Server) startLocked(ctx context.Context, g store.GadgetRecord, u *moduleUse) (lg *liveGadget, started bool, err error) {
	if s.closed {
		return nil, false, errClosed
	}
	if lg := s.live[g.ID]; lg != nil {
		lg.use.touch()
		return lg, false, nil
	}
	if s.removing[g.ID] > 0 {
		return nil, false, errUnknownGadget(g.ID) // being removed
	}
	if _, err := s.store.Gadget(ctx, g.ID); err != nil {
		return nil, false, errUnknownGadget(g.ID) // removed meanwhile
	}
	logs := newLogRing(s.cfg)
	lg = &liveGadget{id: g.ID, owner: g.OwnerID, module: u, storage: s.newGadgetStorageLocked(g.ID, logs), logs: logs}
	h := newHost(lg, s.desk)
	hostCap := schema.Host(capserver.New(schema.Host_Methods(nil, h), h, h))
	lg.sandbox = &sandbox{
		Sandbox: s.rt.NewSandbox(u.entry.mod, hostCap, wasmhost.WithName(g.ID), wasmhost.WithOwner(g.OwnerID),
			wasmhost.WithCallScope(lg.storage.begin), wasmhost.WithContextValues(lg.storage.guestValues())),
		lg: lg,
	}
	lg.use.touch()
	s.live[g.ID] = lg
	return lg, true, nil
}

// logsOf returns the log of gadget id, or nil if it is not live.
func (s *Server) logsOf(id string) *logRing {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lg := s.live[id]; lg != nil {
		return lg.logs
	}
	return nil
}

// removeGadget kills the gadget's sandbox, which breaks every session opened
// from it, and deletes it with its data. The slow parts (waiting for a
// commit in progress, the delete itself) run outside Server.mu, so one
// removal never stalls the other gadgets; while they run, the id is in
// Server.removing and cannot be started again.
func (s *Server) removeGadget(ctx context.Context, id string) error {
	s.mu.Lock()
	lg := s.live[id]
	delete(s.live, id)
	s.removing[id]++
	storages := make([]*gadgetStorage, 0, len(s.storages[id]))
	for st := range s.storages[id] {
		storages = append(storages, st)
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.removing[id]--; s.removing[id] == 0 {
			delete(s.removing, id)
		}
		s.mu.Unlock()
	}()
	// From here on every Storage of the gadget (the live one, and those a
	// client still holds from an earlier sandbox) refuses writes, so a call
	// still running cannot recreate the data deleted below.
	for _, st := range storages {
		st.close()
	}
	err := errors.Join(s.store.DeleteGadget(ctx, id), s.desk.RemoveGadget(ctx, id))
	if lg != nil {
		s.closeShell(lg) // waits for a running call
	}
	return err
}

// newestBlueprint returns the newest version of blueprint name that user can
// use: their own installation if they have one, else the builtin.
func (s *Server) newestBlueprint(ctx context.Context, user store.User, name string) (store.BlueprintRecord, error) {
	for _, owner := range []string{user.ID, ""} {
		all, err := s.store.Blueprints(ctx, owner)
		if err != nil {
			return store.BlueprintRecord{}, err
		}
		var newest *store.BlueprintRecord
		for i := range all {
			if all[i].Name == name && (newest == nil || all[i].Seq > newest.Seq) {
				newest = &all[i]
			}
		}
		if newest != nil {
			return *newest, nil
		}
	}
	return store.BlueprintRecord{}, fmt.Errorf("unknown blueprint %q", name)
}

// visibleBlueprints returns the newest version of each blueprint user can
// use, by name; the user's own shadow builtins of the same name.
func (s *Server) visibleBlueprints(ctx context.Context, user store.User) ([]store.BlueprintRecord, error) {
	newest := map[string]store.BlueprintRecord{}
	for _, owner := range []string{"", user.ID} {
		all, err := s.store.Blueprints(ctx, owner)
		if err != nil {
			return nil, err
		}
		byName := map[string]store.BlueprintRecord{}
		for _, bp := range all {
			if cur, ok := byName[bp.Name]; !ok || bp.Seq > cur.Seq {
				byName[bp.Name] = bp
			}
		}
		for n, bp := range byName {
			newest[n] = bp
		}
	}
	out := make([]store.BlueprintRecord, 0, len(newest))
	for _, bp := range newest {
		out = append(out, bp)
	}
	slices.SortFunc(out, func(a, b store.BlueprintRecord) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

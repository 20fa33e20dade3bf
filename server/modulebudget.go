package server

// Design: compiled blueprint code lives in native memory outside every
// instance's memory budget (wasmhost counts linear memory, tables and
// stacks), so the registry bounds it itself, in two ways:
//
//   - per user: the modules their live gadgets hold, each counted once
//     however many of their gadgets use it. The gadget's owner pays: a
//     user's blueprint versions are theirs alone (a gadget runs its owner's
//     version), and the owner is whom wasmhost.WithOwner charges for the
//     instances too. Builtins are shared, trusted and installed by the
//     operator, so they cost nobody anything.
//   - in total: every loaded module of a user's blueprint, idle ones
//     included; making a module live first frees idle modules, least
//     recently used first, and only then refuses.
//
// A module's cost is an estimate from its wasm size: wazero does not tell
// the size of the code it compiled, and the compilation cache's entry, the
// closest measure, lives in wasmhost's cache directory, keyed by a hash the
// server cannot name. Measured as cache entry / wasm with wazero v1.12:
// the Go guests (examples, test guests) 3.6x; a chain of calls 7x; dense
// i32.load/i32.add with distinct offsets 7.5x (an outside tester: 5x in the
// cache, 6.6x of RSS); a chain of i32.load each taking the last one's
// result, 20.4x (3 bytes of wasm a load, the shortest). moduleCodeFactor
// is 24, above the worst seen, so the bound errs on the side of the
// machine and charges ordinary guests about 6x what they cost. All fields
// are guarded by Server.mu.

import (
	"fmt"

	"capnproto.org/go/capnp/v3/exc"
)

// moduleCodeFactor is how many bytes of server memory a loaded module is
// taken to cost per byte of its wasm.
const moduleCodeFactor = 24

// Defaults of WithModuleMemory: the compiled code of all loaded modules may
// take as much as wasmhost's default memory budget for all instances, and
// one user half of it, as the instances' per-user share.
const (
	DefaultModuleMemoryTotal   = 2 << 30
	DefaultModuleMemoryPerUser = DefaultModuleMemoryTotal / 2
)

// moduleBudget is the bound on compiled code (WithModuleMemory).
type moduleBudget struct{ perUser, total int64 }

// moduleCost is what a loaded module of owner with wasmSize bytes of wasm is
// taken to cost: nothing for a builtin.
func moduleCost(owner string, wasmSize int) int64 {
	if owner == "" {
		return 0
	}
	return int64(wasmSize) * moduleCodeFactor
}

// moduleBytesLocked returns the cost of the modules user's live gadgets
// hold, and of all loaded modules. Callers hold Server.mu.
func (s *Server) moduleBytesLocked(user string) (held, total int64) {
	for _, e := range s.modules {
		total += e.cost
		if e.holders[user] > 0 {
			held += e.cost
		}
	}
	return held, total
}

// chargeModuleLocked charges a use of e, made live by a gadget of user, to
// user and, if nobody held e live yet, to the total, freeing idle modules if
// the total needs room; past either limit it refuses with an overloaded
// exception naming it. It returns the idle modules freed, for closing
// outside the lock. Callers hold Server.mu and one use of e.
func (s *Server) chargeModuleLocked(e *moduleEntry, user string) ([]*moduleEntry, error) {
	held, _ := s.moduleBytesLocked(user)
	if e.holders[user] == 0 && held+e.cost > s.cfg.modules.perUser {
		return nil, exc.New(exc.Overloaded, "", fmt.Sprintf(
			"your gadgets would hold %s of compiled blueprint code in memory, the limit is %s; close sessions on gadgets of other blueprint versions",
			formatBytes(held+e.cost), formatBytes(s.cfg.modules.perUser)))
	}
	freed := s.unusedModulesLocked()
	if _, total := s.moduleBytesLocked(user); len(e.holders) == 0 && total > s.cfg.modules.total {
		return freed, exc.New(exc.Overloaded, "", fmt.Sprintf(
			"the server holds %s of compiled blueprint code in memory, the limit is %s; try again later",
			formatBytes(total), formatBytes(s.cfg.modules.total)))
	}
	if e.holders == nil {
		e.holders = map[string]int{}
	}
	e.holders[user]++
	return freed, nil
}

// unchargeLocked gives back a use charged by chargeModuleLocked.
// Callers hold Server.mu.
func (e *moduleEntry) unchargeLocked(user string) {
	if e.holders[user]--; e.holders[user] == 0 {
		delete(e.holders, user)
	}
}

// formatBytes writes n for a person to read.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d KiB", (n+1023)/1024)
	}
}

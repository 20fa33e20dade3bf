package wasmcheck

import (
	"testing"

	"github.com/gadgetd/gadgetd/internal/wasmbuild"
)

// Whatever the bytes, Check returns (it never panics, and the allocation
// checks of TestClaimedCountsAllocateNothing hold because no count is
// trusted), and it is monotonic in its limits: a module within small limits
// is within the defaults. make soak runs this longer; make test replays the
// seeds and any saved crashers.
func FuzzCheckNeverPanics(f *testing.F) {
	f.Add(watGuest(f))
	f.Add(wasmbuild.ForTest(f, realGoGuests[0]))
	for _, seed := range [][]byte{
		funcs(localsBody(1e9)),
		funcs(nestedBody(100)),
		funcs(brTablesBody(3, 1000)),
		tableGrow(tableSection(1, -1), 64<<20),
		tableGrow(tableSection(1, 10), 64<<20),
		module(tableSection(1<<27, -1)),
		module(importOf(1, 0x70, 0, 1)),
		module(importOf(2, 0, 1)),
		module(importOf(3, 0x7f, 0)),
		module(section(0, []byte{4}, []byte("name"), []byte{1, 2, 3})),
	} {
		f.Add(seed)
	}
	small := Limits{
		ModuleSize: 1 << 16, Types: 8, Imports: 8, Functions: 8, Globals: 8, Exports: 8,
		ElementSegments: 8, DataSegments: 8, Tables: 1, TableEntries: 64, Locals: 16,
		FunctionBodySize: 1 << 10, NestingDepth: 8, BrTableTargets: 16,
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		errDefault := Check(wasm, Limits{})
		if errSmall := Check(wasm, small); errSmall == nil && errDefault != nil {
			t.Fatalf("accepted within small limits but refused with the defaults: %v", errDefault)
		}
	})
}

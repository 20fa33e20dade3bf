package wasmcheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/wasmbuild"
)

func TestMain(m *testing.M) {
	code := m.Run()
	wasmbuild.RemoveAll()
	os.Exit(code)
}

func wantRefusal(t *testing.T, name string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: Check error = %v, want one containing %q", name, err, want)
	}
}

// Each limit accepts a module that needs exactly the limit, and refuses one
// that needs one more, with an error naming the limit and where.
func TestEachLimitAcceptsItsBoundAndRefusesOneMore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int // the limit; 10 if zero
		set   func(*Limits, int)
		build func(n int) []byte
		want  string // in the refusal of build(n+1)
	}{
		{"module size", 20, func(l *Limits, v int) { l.ModuleSize = v }, func(n int) []byte {
			return module(section(0, []byte{0}, make([]byte, n-11))) // header 8, id, size, empty name
		}, "module is 21 bytes; the limit is 20"},
		{"types", 0, func(l *Limits, v int) { l.Types = v }, func(n int) []byte {
			return module(section(1, vec(n, typeVoid)))
		}, "module declares 11 types; the limit is 10"},
		{"imports", 0, func(l *Limits, v int) { l.Imports = v }, func(n int) []byte {
			return module(types, section(2, vec(n, []byte{1, 'm', 1, 'f', 0, 0})))
		}, "module declares 11 imports; the limit is 10"},
		{"functions", 0, func(l *Limits, v int) { l.Functions = v }, func(n int) []byte {
			bodies := make([][]byte, n)
			for i := range bodies {
				bodies[i] = []byte{0, 0x0b}
			}
			return funcs(bodies...)
		}, "module declares 11 functions; the limit is 10"},
		{"globals", 0, func(l *Limits, v int) { l.Globals = v }, func(n int) []byte {
			return module(section(6, vec(n, []byte{0x7f, 0, 0x41, 0, 0x0b})))
		}, "module declares 11 globals; the limit is 10"},
		{"exports", 0, func(l *Limits, v int) { l.Exports = v }, func(n int) []byte {
			return module(section(7, vec(n, []byte{1, 'e', 0, 0})))
		}, "module declares 11 exports; the limit is 10"},
		{"element segments", 0, func(l *Limits, v int) { l.ElementSegments = v }, func(n int) []byte {
			return module(section(9, vec(n, []byte{1, 0, 0}))) // passive, funcref, empty
		}, "module declares 11 element segments; the limit is 10"},
		{"data segments", 0, func(l *Limits, v int) { l.DataSegments = v }, func(n int) []byte {
			return module(section(11, vec(n, []byte{1, 0}))) // passive, empty
		}, "module declares 11 data segments; the limit is 10"},
		{"tables", 0, func(l *Limits, v int) { l.Tables = v }, func(n int) []byte {
			return module(section(4, vec(n, []byte{0x70, 0, 0})))
		}, "module declares 11 tables; the limit is 10"},
		{"table maximum", 0, func(l *Limits, v int) { l.TableEntries = v }, func(n int) []byte {
			return module(tableSection(1, int64(n)))
		}, "table 0 declares a maximum of 11 entries; the limit is 10"},
		{"table size without a maximum", 0, func(l *Limits, v int) { l.TableEntries = v }, func(n int) []byte {
			return module(tableSection(uint64(n), -1))
		}, "table 0 declares 11 entries and no maximum; the limit is 10"},
		{"locals", 0, func(l *Limits, v int) { l.Locals = v }, func(n int) []byte {
			return funcs(localsBody(uint64(n)))
		}, "function 0 declares 11 locals; the limit is 10"},
		{"locals and parameters", 0, func(l *Limits, v int) { l.Locals = v }, func(n int) []byte {
			body := localsBody(uint64(n - 2))
			return module(section(1, vec(1, []byte{0x60, 2, 0x7f, 0x7f, 0})), section(3, vec(1, []byte{0})),
				section(10, leb(1), leb(uint64(len(body))), body))
		}, "function 0 declares 9 locals, 11 with its parameters; the limit is 10"},
		{"locals after imported functions", 0, func(l *Limits, v int) { l.Locals = v }, func(n int) []byte {
			body := localsBody(uint64(n))
			return module(types, section(2, vec(3, []byte{1, 'm', 1, 'f', 0, 0})), section(3, vec(1, []byte{0})),
				section(10, leb(1), leb(uint64(len(body))), body))
		}, "function 3 declares 11 locals; the limit is 10"}, // numbered as tools number it
		{"function body size", 0, func(l *Limits, v int) { l.FunctionBodySize = v }, func(n int) []byte {
			return funcs(cat([]byte{0}, bytes.Repeat([]byte{0x01}, n-2), endOp)) // nops
		}, "function 0's body is 11 bytes; the limit is 10"},
		{"nesting depth", 0, func(l *Limits, v int) { l.NestingDepth = v }, func(n int) []byte {
			return funcs(nestedBody(n))
		}, "function 0 nests blocks, loops and ifs more than 10 deep (at offset 0x2b); the limit is 10"},
		{"br_table targets", 0, func(l *Limits, v int) { l.BrTableTargets = v }, func(n int) []byte {
			return funcs(brTablesBody(n))
		}, "function 0's br_tables have more than 10 targets in all (the br_table at offset 0x19 reaches 11); the limit is 10"},
		{"br_table targets of several br_tables", 0, func(l *Limits, v int) { l.BrTableTargets = v }, func(n int) []byte {
			return funcs(brTablesBody(4, n-4))
		}, "function 0's br_tables have more than 10 targets in all"},
	} {
		n := tc.n
		if n == 0 {
			n = 10
		}
		var lim Limits
		tc.set(&lim, n)
		if err := Check(tc.build(n), lim); err != nil {
			t.Errorf("%s: a module at the limit of %d is refused: %v", tc.name, n, err)
		}
		wantRefusal(t, tc.name+" past the limit", Check(tc.build(n+1), lim), tc.want)
	}
}

// The modules that killed the server (issue 7) are refused with the default
// limits, each with a message that names the limit.
func TestHostileModulesAreRefusedWithTheDefaultLimits(t *testing.T) {
	targets := make([]int, 0, 20)
	for range 20 {
		targets = append(targets, 1000)
	}
	for _, tc := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"10⁹ locals", funcs(localsBody(1e9)), "function 0 declares 1000000000 locals; the limit is 5000"},
		{"2³²−1 locals in each of two runs", funcs(cat([]byte{2}, leb(1<<32-1), []byte{0x7f}, leb(1<<32-1), []byte{0x7e}, endOp)),
			"function 0 declares 8589934590 locals; the limit is 5000"},
		{"100k nested blocks", funcs(nestedBody(100_000)), "function 0 nests blocks, loops and ifs more than 5000 deep"},
		{"one br_table of 10⁶ targets", funcs(brTablesBody(1_000_000)), "br_tables have more than 10000 targets in all"},
		{"many br_tables of 1000 targets", funcs(brTablesBody(targets...)), "br_tables have more than 10000 targets in all"},
		{"a table that grows without a maximum", tableGrow(tableSection(1, -1), 64<<20),
			"function 0 grows table 0 (table.grow at offset 0x24), which declares no maximum; a table that grows must declare a maximum of at most 131072 entries"},
		{"a table of 2²⁷ entries", module(tableSection(1<<27, -1)), "table 0 declares 134217728 entries and no maximum; the limit is 131072"},
		{"a table with a maximum of 2³²−1", module(tableSection(1, 1<<32-1)), "table 0 declares a maximum of 4294967295 entries; the limit is 131072"},
		{"an imported table", module(importOf(1, 0x70, 0, 1)), "module imports table env.x: a guest may import only functions"},
		{"an imported memory", module(importOf(2, 0, 1)), "module imports memory env.x: a guest may import only functions"},
		{"an imported global", module(importOf(3, 0x7f, 0)), "module imports global env.x: a guest may import only functions"},
		{"two memories", module(section(5, vec(2, []byte{0, 1}))), "module declares 2 memories; at most one is allowed"},
		{"33 MiB", module(section(0, []byte{0}, make([]byte, 33<<20))), "module is 34603022 bytes; the limit is 33554432"},
	} {
		wantRefusal(t, tc.name, Check(tc.wasm, Limits{}), tc.want)
	}
	// A table with a declared maximum within the limit may be grown: wazero
	// refuses to grow it past that maximum at run time.
	if err := Check(tableGrow(tableSection(1, 1000), 64<<20), Limits{}); err != nil {
		t.Errorf("a table with a maximum of 1000 entries that grows: %v", err)
	}
}

// Claimed counts are checked against the bytes that back them, and summed
// without allocating: refusing a module that claims gigabytes costs next
// to nothing.
func TestClaimedCountsAllocateNothing(t *testing.T) {
	max32 := leb(1<<32 - 1)
	lim := Limits{Types: 1 << 30, DataSegments: 1 << 30, Locals: 1 << 30, BrTableTargets: 1 << 30, FunctionBodySize: 1 << 30}
	for _, tc := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"2³² locals", funcs(localsBody(1<<32 - 1)), "function 0 declares 4294967295 locals"},
		{"10⁹ types in 5 bytes", module(section(1, leb(1e9))), "1000000000 types claimed in 0 bytes"},
		{"10⁹ data segments in 5 bytes", module(section(11, leb(1e9))), "1000000000 data segments claimed in 0 bytes"},
		{"a 4 GiB data segment", module(section(11, leb(1), []byte{1}, max32)), "data segment claims 4294967295 bytes but only 0 remain"},
		{"a br_table of 10⁹ targets in 8 bytes", funcs(cat([]byte{0, 0x41, 0, 0x0e}, leb(1e9), endOp)), "br_table claims 1000000001 targets in 1 bytes"},
		{"2³² local runs", funcs(cat(max32, endOp)), "4294967295 local declarations claimed in 1 bytes"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := Check(tc.wasm, lim)
		runtime.ReadMemStats(&after)
		wantRefusal(t, tc.name, err, tc.want)
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
			t.Errorf("%s: Check allocated %d bytes for a %d-byte module", tc.name, n, len(tc.wasm))
		}
	}
}

func TestMalformedModulesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"not wasm", []byte("hello"), "not a WebAssembly module"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), "binary format version is not 1"},
		{"truncated section", []byte("\x00asm\x01\x00\x00\x00\x01\x05\x01"), "type section claims 5 bytes but only 1 remain"},
		{"unknown section", module(section(13)), "unknown section id 13"},
		{"sections out of order", module(section(3, leb(0)), types), "type section is repeated or out of order"},
		{"repeated section", module(types, types), "type section is repeated or out of order"},
		{"bytes past a section's end", module(section(1, leb(0), []byte{0})), "type section has 1 bytes past its end"},
		{"LEB128 longer than 5 bytes", module(section(1, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0})), "integer too large for 32 bits, or longer than 5 bytes"},
		{"LEB128 past 32 bits", module(section(1, []byte{0x80, 0x80, 0x80, 0x80, 0x10})), "integer too large for 32 bits"},
		{"i64.const longer than 10 bytes", funcs(cat([]byte{0, 0x42}, bytes.Repeat([]byte{0x80}, 10), []byte{0, 0x1a, 0x0b})), "integer representation longer than 10 bytes"},
		{"i32.const past 32 bits", funcs([]byte{0, 0x41, 0x80, 0x80, 0x80, 0x80, 0x08, 0x1a, 0x0b}), "integer too large for 32 bits"},
		{"body without its end", funcs([]byte{0, 0x01}), "function 0's body ends before its final end"},
		{"code after the final end", funcs([]byte{0, 0x0b, 0x01}), "function 0 has 1 bytes after its final end"},
		{"bodies do not match functions", module(types, section(3, vec(2, []byte{0})), section(10, leb(1), []byte{2, 0, 0x0b})), "1 function bodies for 2 declared functions"},
		{"functions without code", module(types, section(3, vec(1, []byte{0}))), "1 functions are declared but there is no code section"},
		{"unknown type index", module(types, section(3, vec(1, []byte{1}))), "type index 1 out of range (1 types)"},
		{"invalid block type", funcs([]byte{0, 0x02, 0x01, 0x0b, 0x0b}), "invalid block type 1"},
		{"exception handling", funcs([]byte{0, 0x06, 0x40, 0x0b, 0x0b}), "opcode 0x6 is not a WebAssembly 2.0 instruction"},
		{"tail call", funcs([]byte{0, 0x12, 0, 0x0b}), "opcode 0x12 is not a WebAssembly 2.0 instruction"},
		{"atomics", funcs([]byte{0, 0xfe, 0x03, 0, 0x0b}), "opcode 0xfe is not a WebAssembly 2.0 instruction"},
		{"unknown 0xfc opcode", funcs([]byte{0, 0xfc, 18, 0x0b}), "opcode 0xfc 18 is not a WebAssembly 2.0 instruction"},
		{"unassigned SIMD opcode", funcs([]byte{0, 0xfd, 0x9a, 0x01, 0x0b}), "opcode 0xfd 0x9a is not a WebAssembly 2.0 instruction"},
		// 0x8c 0x80 0x80 0x80 0x00 is 12 (v128.const) in LEB128, but wazero
		// reads the opcode 0x8c and then takes the "constant" for code.
		{"padded SIMD opcode", funcs(cat([]byte{0, 0xfd, 0x8c, 0x80, 0x80, 0x80, 0x00}, make([]byte, 16), endOp)), "SIMD opcode is not in its shortest encoding"},
		{"memory.grow with a padded reserved byte", funcs([]byte{0, 0x41, 0, 0x40, 0x80, 0x00, 0x1a, 0x0b}), "reserved byte is 0x80, want 0x00"},
		{"table.grow of a table that does not exist", tableGrow(nil, 1), "function 0 grows table 0, which does not exist"},
		{"shared memory", module(section(5, vec(1, []byte{3, 1, 1}))), "memory limits flag 0x3 is not 0x00 or 0x01"},
		{"table maximum below its minimum", module(tableSection(2, 1)), "table maximum 1 is below its minimum 2"},
		{"non-constant global initializer", module(section(6, vec(1, []byte{0x7f, 0, 0x6a, 0x0b}))), "opcode 0x6a in a constant expression"},
	} {
		wantRefusal(t, tc.name, Check(tc.wasm, Limits{}), tc.want)
	}
}

// Instructions with every kind of immediate are read as wazero reads them:
// a function using them all passes, so none is skipped short or long.
func TestEveryKindOfImmediateIsRead(t *testing.T) {
	code := cat(
		[]byte{0x02, 0x7f, 0x41, 0x7f, 0x0b, 0x1a},                                     // block (result i32) i32.const -1 end drop
		[]byte{0x03, 0x00, 0x0b},                                                       // loop (type 0) end
		[]byte{0x41, 0x01, 0x04, 0x40, 0x05, 0x0b},                                     // i32.const 1 if else end
		[]byte{0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f, 0x1a}, // i64.const min drop
		[]byte{0x43, 0, 0, 0x80, 0x3f, 0x1a},                                           // f32.const 1 drop
		[]byte{0x44, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x1a},                               // f64.const 1 drop
		[]byte{0x41, 0, 0x28, 0x02, 0x80, 0x01, 0x1a},                                  // i32.load align=2 offset=128 drop
		[]byte{0x3f, 0x00, 0x1a},                                                       // memory.size drop
		[]byte{0x41, 0, 0x41, 0, 0x41, 0, 0x1c, 0x01, 0x7f, 0x1a},                      // select (result i32) drop
		[]byte{0xd0, 0x70, 0xd1, 0x1a},                                                 // ref.null func ref.is_null drop
		[]byte{0xd2, 0x00, 0x1a},                                                       // ref.func 0 drop
		[]byte{0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 0x0a, 0x00, 0x00},                      // memory.copy
		[]byte{0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 0x0b, 0x00},                            // memory.fill
		[]byte{0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 0x08, 0x00, 0x00},                      // memory.init 0
		[]byte{0xfc, 0x09, 0x00},                                                       // data.drop 0
		[]byte{0xfc, 0x10, 0x00, 0x1a},                                                 // table.size 0 drop
		[]byte{0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 0x0c, 0x00, 0x00},                      // table.init 0 0
		[]byte{0xfc, 0x0d, 0x00},                                                       // elem.drop 0
		[]byte{0xfd, 0x0c}, make([]byte, 16),                                           // v128.const
		[]byte{0xfd, 0x15, 0x00, 0x1a},                                                            // i8x16.extract_lane_s 0 drop
		[]byte{0x41, 0, 0xfd, 0x0c}, make([]byte, 16), []byte{0xfd, 0x54, 0x00, 0x00, 0x00, 0x1a}, // v128.load8_lane drop
		[]byte{0xfd, 0x0c}, make([]byte, 16), []byte{0xfd, 0x80, 0x01, 0x1a}, // i16x8.abs (two-byte opcode) drop
		[]byte{0x41, 0, 0x0e, 0x01, 0x00, 0x00}, // br_table 0 0
		endOp,
	)
	body := cat([]byte{0}, code)
	wasm := module(types, section(3, vec(1, []byte{0})),
		tableSection(1, 1),
		section(5, vec(1, []byte{0, 1})),
		section(9, leb(1), []byte{1, 0, 1, 0}), // passive, funcref, [0]
		section(12, leb(1)),
		section(10, leb(1), leb(uint64(len(body))), body),
		section(11, leb(1), []byte{1, 1, 'x'}),
	)
	if err := Check(wasm, Limits{}); err != nil {
		t.Fatal(err)
	}
}

// Real Go guests (the examples and the test guests) and the WAT guest pass
// the defaults with at least four times what they need of every limit: the
// measurements in the doc comment of Limits come from this test (go test
// -v -run RealGuests logs them).
func TestRealGuestsFitTheDefaultsWithAWideMargin(t *testing.T) {
	guests := map[string][]byte{"watguest": watGuest(t)}
	for _, pkg := range realGoGuests {
		guests[filepath.Base(pkg)] = wasmbuild.ForTest(t, pkg)
	}
	d := DefaultLimits()
	for name, wasm := range guests {
		if err := Check(wasm, Limits{}); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		u, err := check(wasm, d)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes, %+v", name, len(wasm), u)
		for _, f := range []struct {
			what       string
			use, bound int
		}{
			{"bytes", len(wasm), d.ModuleSize},
			{"types", u.types, d.Types},
			{"imports", u.imports, d.Imports},
			{"functions", u.functions, d.Functions},
			{"globals", u.globals, d.Globals},
			{"exports", u.exports, d.Exports},
			{"element segments", u.elementSegments, d.ElementSegments},
			{"data segments", u.dataSegments, d.DataSegments},
			{"tables", u.tables, d.Tables},
			{"table entries", u.tableEntries, d.TableEntries},
			{"locals", u.locals, d.Locals},
			{"body bytes", u.functionBodySize, d.FunctionBodySize},
			{"nesting depth", u.nestingDepth, d.NestingDepth},
			{"br_table targets", u.brTableTargets, d.BrTableTargets},
		} {
			if f.use*4 > f.bound && f.what != "tables" { // Go's one table of the two allowed
				t.Errorf("%s needs %d %s: less than 4 times that is allowed (%d)", name, f.use, f.what, f.bound)
			}
		}
	}
}

var realGoGuests = []string{
	"github.com/gadgetd/gadgetd/internal/testcounter",
	"github.com/gadgetd/gadgetd/examples/notes",
	"github.com/gadgetd/gadgetd/wasmhost/internal/testguests/benchguest",
	"github.com/gadgetd/gadgetd/wasmhost/internal/testguests/hostile",
	"github.com/gadgetd/gadgetd/wasmhost/internal/testguests/rawabi",
}

// watGuest assembles the WAT guest with wabt's wat2wasm.
func watGuest(t testing.TB) []byte {
	t.Helper()
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatalf("wat2wasm is not installed: install the Debian package wabt (scripts/deps.sh does) (%v)", err)
	}
	out := filepath.Join(t.TempDir(), "guest.wasm")
	if msg, err := exec.Command(tool, "../testguests/watguest/guest.wat", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

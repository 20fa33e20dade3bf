package wasmhost_test

// Modules that attack the host before any guest code runs, through what
// they declare (issue 7): Compile refuses each with the module checker
// (internal/wasmcheck), before wazero decodes the bytes. Each test was seen
// to fail with the check removed from Compile.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// compileAllocating compiles wasm on a fresh Runtime and returns the error
// and how many bytes the process allocated meanwhile.
func compileAllocating(t *testing.T, wasm []byte, opts ...wasmhost.Option) (error, uint64) {
	t.Helper()
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := rt.Compile(ctx, wasm)
	runtime.ReadMemStats(&after)
	if err == nil {
		m.Close(ctx)
	}
	return err, after.TotalAlloc - before.TotalAlloc
}

// Guards: the locals count in wasmcheck (code.go), called first thing by
// Compile. wazero's decoder allocates for every declared local before it
// reads the code: 10⁹ of them, in a module of a few dozen bytes, ended the
// server with "fatal error: out of memory".
func TestModuleDeclaringABillionLocalsIsRefusedWithoutAllocating(t *testing.T) {
	billionLocals := []byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x04\x01\x60\x00\x00" + // type section: () -> ()
		"\x03\x02\x01\x00" + // function section: one function, of type 0
		"\x0a\x0a\x01\x08" + // code section: one body of 8 bytes:
		"\x01\x80\x94\xeb\xdc\x03\x7f" + // one run of 10⁹ (LEB128) locals of i32,
		"\x0b") //                          and end
	err, allocated := compileAllocating(t, billionLocals)
	wantErr(t, "compile", err, "invalid WebAssembly module: function 0 declares 1000000000 locals; the limit is 5000")
	if allocated > 64<<20 {
		t.Errorf("refusing a %d-byte module allocated %d MiB", len(billionLocals), allocated>>20)
	}
}

// Guards: the nesting depth and br_table bounds in wasmcheck (code.go).
// wazero's compiler needs time and memory superlinear in both: 100k nested
// blocks took 82 s of CPU, 2M went past 15 GB, and 20 MB of br_table killed
// the server. Each is refused before anything is compiled, so with next to
// no allocation.
func TestDeepNestingAndHugeBrTablesAreRefusedBeforeCompiling(t *testing.T) {
	manyTables := strings.Repeat("(block (br_table "+strings.Repeat("0 ", 1000)+"0 (i32.const 0)))\n", 20)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"a br_table of 10⁶ targets", "(br_table " + strings.Repeat("0 ", 1_000_000) + "0 (i32.const 0))",
			"invalid WebAssembly module: function 0's br_tables have more than 10000 targets in all"},
		{"20 br_tables of 1001 targets", manyTables,
			"invalid WebAssembly module: function 0's br_tables have more than 10000 targets in all"},
	} {
		err, allocated := compileAllocating(t, wat(t, "(module (func "+tc.body+"))"))
		wantErr(t, tc.name, err, tc.want)
		if allocated > 64<<20 {
			t.Errorf("%s: refusing it allocated %d MiB", tc.name, allocated>>20)
		}
	}

	// wat2wasm cannot nest 100k deep, so this one is built byte by byte.
	const depth = 100_000
	body := append([]byte{0}, bytes.Repeat([]byte{0x02, 0x40}, depth)...) // no locals; block × depth
	body = append(body, bytes.Repeat([]byte{0x0b}, depth+1)...)           // end × depth, and the function's
	code := append(binary.AppendUvarint([]byte{1}, uint64(len(body))), body...)
	nested := slices.Concat([]byte("\x00asm\x01\x00\x00\x00"),
		[]byte("\x01\x04\x01\x60\x00\x00"), // type section: () -> ()
		[]byte("\x03\x02\x01\x00"),         // function section: one function, of type 0
		binary.AppendUvarint([]byte{10}, uint64(len(code))), code)
	err, allocated := compileAllocating(t, nested)
	wantErr(t, "100k nested blocks", err, "invalid WebAssembly module: function 0 nests blocks, loops and ifs more than 5000 deep (at offset 0x")
	if allocated > 64<<20 {
		t.Errorf("100k nested blocks: refusing them allocated %d MiB", allocated>>20)
	}
}

// tableGuest is a guest whose table $t is declared by table, and whose every
// call grows $t by 64 Mi entries (what took 0.5 to 2.5 GB of host memory per
// call, outside every limit) and traps unless table.grow failed (returned
// −1). A call that gets past the grow answers with the exception "full".
const tableGuest = `(module
  %s
  (memory (export "memory") 1)
  ;; Frame{exception: "full"}, as in memory_test.go's deepGuest.
  (data (i32.const 0x100)
    "\00\00\00\00\04\00\00\00" "\00\00\00\00\01\00\01\00"
    "\02\00\00\00\00\00\00\00" "\01\00\00\00\2a\00\00\00" "full\00\00\00\00")
  (func (export "_initialize"))
  (func (export "gadgetd_alloc") (param i32) (result i32) (i32.const 0x1000))
  (func (export "gadgetd_deliver") (param i32 i32) (result i64)
    (if (i32.ne (table.grow $t (ref.null func) (i32.const 0x4000000)) (i32.const -1))
      (then unreachable))
    (i64.const 0x0000010000000028)))`

// Guards: the table rules in wasmcheck (check.go, code.go): every table
// holds at most TableEntries entries, ever. A table that declares a maximum
// within it can grow only to that maximum (wazero's table.grow fails past
// it, and the guest sees −1); a table that declares none, as Go's linker
// emits, may not be grown at all, so a module that grows one is refused.
func TestTablesCannotGrowPastTheirBound(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)

	_, err = rt.Compile(ctx, wat(t, fmt.Sprintf(tableGuest, `(table $t 1 funcref)`)))
	wantErr(t, "a growing table without a maximum", err,
		"invalid WebAssembly module: function 2 grows table 0 (table.grow at offset 0x", "which declares no maximum; a table that grows must declare a maximum of at most 131072 entries")
	for _, tc := range []struct{ table, want string }{
		{`(table $t 134217728 funcref)`, "invalid WebAssembly module: table 0 declares 134217728 entries and no maximum; the limit is 131072"},
		{`(table $t 1 134217728 funcref)`, "invalid WebAssembly module: table 0 declares a maximum of 134217728 entries; the limit is 131072"},
	} {
		_, err := rt.Compile(ctx, wat(t, fmt.Sprintf(tableGuest, tc.table)))
		wantErr(t, "a table of 2²⁷ entries", err, tc.want)
	}

	// Within the bound, the grow is allowed and fails at run time: every
	// call reaches the answer, which it could not have if a grow had
	// succeeded. The server died on the fifth such call.
	mod, err := rt.Compile(ctx, wat(t, fmt.Sprintf(tableGuest, `(table $t 1 1024 funcref)`)))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	g := rt.NewSandbox(mod, memhost.New().Client(), wasmhost.WithName("grower"))
	defer g.Close()
	for i := range 8 {
		guest := g.Guest()
		f, release := guest.Open(ctx, nil)
		_, err := f.Struct()
		release()
		guest.Release()
		wantErr(t, fmt.Sprintf("call %d", i+1), err, "full")
	}
}

// Guards: the import kinds in wasmcheck (check.go). A module importing a
// table or a global used to pass Compile and then fail every call with
// "failed to start"; now Compile refuses it, as docs/ABI.md says. (An
// imported memory is refused the same way: see
// TestCompileRefusesImportsTheHostCannotSatisfy.)
func TestCompileRefusesImportedTablesGlobalsAndMemories(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	for _, tc := range []struct{ imports, want string }{
		{`(import "env" "table" (table 1 funcref))`, "module imports table env.table: a guest may import only functions"},
		{`(import "env" "g" (global i32))`, "module imports global env.g: a guest may import only functions"},
		{`(import "wasi_snapshot_preview1" "g" (global (mut i64)))`, "module imports global wasi_snapshot_preview1.g: a guest may import only functions"},
	} {
		_, err := rt.Compile(ctx, wat(t, fmt.Sprintf(guestShell, tc.imports)))
		wantErr(t, tc.imports, err, "invalid WebAssembly module: "+tc.want)
	}
}

// Guards: WithModuleLimits reaching the check. The counter, which needs 18
// locals in one function, is refused under a limit of 17 and compiles under
// the defaults (as every other test's guest does).
func TestModuleLimitsAreConfigurable(t *testing.T) {
	counter := wasmbuild.ForTest(t, counterPkg)
	err, _ := compileAllocating(t, counter, wasmhost.WithModuleLimits(wasmhost.ModuleLimits{Locals: 17}))
	wantErr(t, "counter with at most 17 locals", err, "invalid WebAssembly module: function ", "with its parameters; the limit is 17")
	if d := wasmhost.DefaultModuleLimits(); d.Locals != 5000 || d.NestingDepth != 5000 || d.TableEntries != 1<<17 {
		t.Errorf("DefaultModuleLimits() = %+v, not the documented defaults", d)
	}
}

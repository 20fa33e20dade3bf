package wasmcheck

// Limits bounds what a module may declare. A zero field means the field's
// value in DefaultLimits().
//
// The defaults leave real guests a wide margin. Measured with Go 1.26
// (GOOS=wasip1 -buildmode=c-shared): the examples counter and notes and the
// test guests benchguest, hostile and rawabi, 3.6 to 5.1 MB each, need at
// most 17 types, 28 imports, 3428 functions, 8 globals, 4 exports, 1 element
// segment, 59283 data segments, 1 table of 7524 entries (Go's linker sizes
// it 4096 + the function count and declares no maximum), 18 locals, 29238
// bytes of body, nesting 549 deep and 896 br_table targets in one function
// (Go's code generator opens one block per resume point and dispatches to
// them with one br_table per function, so both grow with a function's call
// sites). A 9.7 MB Go program linking go/types, net/http, crypto/tls and
// html/template needs 5039 functions, 89418 data segments, a table of 9135
// entries, 62167 bytes of body, nesting 1076 deep and 1643 br_table
// targets. The WAT guest needs 11 globals and nesting 3 deep.
//
// Why each bound, as measured with wazero v1.12 on this project's 2-core
// machine: its decoder allocates 8 bytes per declared local before reading
// the code; its compiler's time and memory grow superlinearly with nesting
// (one function 20000 loops deep: 5.3 s, 20000 ifs deep: 8.4 s; 5000 deep:
// 0.3 to 0.4 s) and with the br_table targets of one function (a single
// br_table of 10⁶ targets: 65 s and 2.5 GB allocated; 10000 targets: 40 ms
// and 23 MB). These bounds cut off such extremes and every allocation a
// declared count would cause, but no static bound can make compiling cheap:
// within them, crafted code still costs far more per byte than real code
// (about 1 s per MB). One 24 KB function of 5000 locals and 3000 loops took
// 24 s and 700 MB to compile: the cost grows with locals times the square
// of loops, and bounding either to what no real toolchain exceeds still
// leaves seconds per function. Bounding compile time and memory as such is
// the compile worker's job (wasmhost.WithCompileWorker).
type Limits struct {
	// ModuleSize bounds the module's size in bytes.
	ModuleSize int
	// Types, Imports, Functions, Globals, Exports, ElementSegments and
	// DataSegments bound the entries of those sections. Functions counts
	// the functions the module defines, not those it imports.
	Types, Imports, Functions, Globals, Exports, ElementSegments, DataSegments int
	// Tables bounds how many tables a module defines, and TableEntries how
	// many entries each may ever hold: its declared maximum, or the size of
	// a table that declares no maximum (which may then never be grown).
	Tables, TableEntries int
	// Locals bounds the locals of one function, its parameters included.
	Locals int
	// FunctionBodySize bounds one function's body in bytes, its local
	// declarations included.
	FunctionBodySize int
	// NestingDepth bounds how deeply blocks, loops and ifs nest in one
	// function.
	NestingDepth int
	// BrTableTargets bounds the targets of all br_tables in one function
	// together, each one's default target included.
	BrTableTargets int
}

// DefaultLimits returns the limits that a zero field of Limits means.
func DefaultLimits() Limits { return defaultLimits }

var defaultLimits = Limits{
	ModuleSize:       32 << 20,
	Types:            10_000,
	Imports:          1_000,
	Functions:        100_000,
	Globals:          1_000,
	Exports:          1_000,
	ElementSegments:  1_000,
	DataSegments:     500_000,
	Tables:           2,
	TableEntries:     1 << 17, // ≥ what Go needs for 100_000 functions; 1 MiB of host memory per table per instance
	Locals:           5_000,
	FunctionBodySize: 1 << 20,
	NestingDepth:     5_000,
	BrTableTargets:   10_000,
}

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	d := defaultLimits
	for _, f := range []struct {
		v   *int
		def int
	}{
		{&l.ModuleSize, d.ModuleSize},
		{&l.Types, d.Types},
		{&l.Imports, d.Imports},
		{&l.Functions, d.Functions},
		{&l.Globals, d.Globals},
		{&l.Exports, d.Exports},
		{&l.ElementSegments, d.ElementSegments},
		{&l.DataSegments, d.DataSegments},
		{&l.Tables, d.Tables},
		{&l.TableEntries, d.TableEntries},
		{&l.Locals, d.Locals},
		{&l.FunctionBodySize, d.FunctionBodySize},
		{&l.NestingDepth, d.NestingDepth},
		{&l.BrTableTargets, d.BrTableTargets},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return l
}

package wasmcheck

// Limits bounds what a module may declare. A zero field means the field's
// value in DefaultLimits().
//
// The defaults leave real guests a wide margin (the largest Go program
// measured needs at most a quarter of each) and cut off every declared
// count whose decoding or compiling wazero pays for up front; the
// measurements behind them are in docs/RATIONALE.md. No static bound makes compiling
// cheap: that is the compile worker's job (wasmhost.WithCompileWorker).
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

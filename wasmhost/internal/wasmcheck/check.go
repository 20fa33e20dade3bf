package wasmcheck

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// Check parses wasm as a WebAssembly 2.0 binary module and returns an error
// if it is malformed, uses what wazero's default feature set does not, or
// exceeds lim (zero fields take their defaults). It runs in time linear in
// len(wasm) and allocates memory proportional to the entries it has read,
// never to a count a module claims.
func Check(wasm []byte, lim Limits) error {
	_, err := check(wasm, lim.withDefaults())
	return err
}

// usage is what a module was measured to need: the tests compare it with
// the defaults for real guests.
type usage struct {
	types, imports, functions, globals, exports, elementSegments, dataSegments int
	tables, tableEntries                                                       int
	locals, functionBodySize, nestingDepth, brTableTargets                     int
}

// table is what the code section needs to know of a table.
type table struct {
	hasMax bool
}

type checker struct {
	lim Limits
	use usage

	typeParams    []uint32 // parameter count of each type
	importedFuncs int
	funcTypes     []uint32 // type of each defined function
	tables        []table
	hasDataCount  bool
	dataCount     uint32
	sawCode       bool
	brTargets     int64 // br_table targets so far in the function being read
}

// Section ids, and the order the spec requires (data count, 12, comes
// between element and code).
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
)

var sectionNames = [...]string{"custom", "type", "import", "function", "table", "memory", "global", "export", "start", "element", "code", "data", "data count"}

var sectionRank = [...]int{secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secGlobal: 6, secExport: 7, secStart: 8, secElement: 9, secDataCount: 10, secCode: 11, secData: 12}

// Value types of WebAssembly 2.0: i32, i64, f32, f64, v128, funcref,
// externref.
func isValType(b byte) bool {
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		return true
	}
	return false
}

func isRefType(b byte) bool { return b == 0x70 || b == 0x6f }

func check(wasm []byte, lim Limits) (usage, error) {
	c := checker{lim: lim}
	if len(wasm) > lim.ModuleSize {
		return c.use, fmt.Errorf("module is %d bytes; the limit is %d", len(wasm), lim.ModuleSize)
	}
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		return c.use, fmt.Errorf("not a WebAssembly module: it does not start with the \\0asm magic bytes")
	}
	if !bytes.HasPrefix(wasm, []byte("\x00asm\x01\x00\x00\x00")) {
		return c.use, fmt.Errorf("malformed module: binary format version is not 1")
	}
	r := reader{b: wasm, pos: 8, end: len(wasm)}
	lastRank := 0
	for r.remaining() > 0 {
		id, err := r.byte()
		if err != nil {
			return c.use, err
		}
		if int(id) >= len(sectionNames) {
			r.pos--
			return c.use, r.errorf("unknown section id %d", id)
		}
		size, err := r.u32()
		if err != nil {
			return c.use, err
		}
		s, err := r.sub(size, sectionNames[id]+" section")
		if err != nil {
			return c.use, err
		}
		if id != secCustom {
			if sectionRank[id] <= lastRank {
				return c.use, fmt.Errorf("malformed module at offset %#x: %s section is repeated or out of order", s.pos, sectionNames[id])
			}
			lastRank = sectionRank[id]
		}
		if err := c.section(id, &s); err != nil {
			return c.use, err
		}
		if s.remaining() != 0 {
			return c.use, s.errorf("%s section has %d bytes past its end", sectionNames[id], s.remaining())
		}
	}
	if len(c.funcTypes) > 0 && !c.sawCode {
		return c.use, fmt.Errorf("malformed module: %d functions are declared but there is no code section", len(c.funcTypes))
	}
	return c.use, nil
}

func (c *checker) section(id byte, r *reader) error {
	switch id {
	case secCustom:
		name, err := r.name("custom section name")
		if err != nil {
			return err
		}
		if !utf8.Valid(name) {
			return r.errorf("custom section name is not UTF-8")
		}
		r.pos = r.end
		return nil
	case secType:
		return c.typeSection(r)
	case secImport:
		return c.importSection(r)
	case secFunction:
		return c.functionSection(r)
	case secTable:
		return c.tableSection(r)
	case secMemory:
		return c.memorySection(r)
	case secGlobal:
		return c.globalSection(r)
	case secExport:
		return c.exportSection(r)
	case secStart:
		_, err := r.u32()
		return err
	case secElement:
		return c.elementSection(r)
	case secDataCount:
		n, err := r.u32()
		c.hasDataCount, c.dataCount = true, n
		return err
	case secCode:
		return c.codeSection(r)
	case secData:
		return c.dataSection(r)
	}
	panic("unreachable: section ids are checked by the caller")
}

// count reads the length of a vector of entries that take at least
// minSize bytes each, refuses it past limit, and refuses a count the
// section's remaining bytes cannot hold, before anything is read or
// allocated for the entries.
func (c *checker) count(r *reader, what string, limit, minSize int, used *int) (int, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	*used = max(*used, int(n))
	if int64(n) > int64(limit) {
		return 0, fmt.Errorf("module declares %d %s; the limit is %d", n, what, limit)
	}
	if int64(n)*int64(minSize) > int64(r.remaining()) {
		return 0, r.errorf("%d %s claimed in %d bytes", n, what, r.remaining())
	}
	return int(n), nil
}

// vecLen reads the length of a vector of entries of at least minSize
// bytes, checking only that the bytes exist.
func vecLen(r *reader, what string, minSize int) (int, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if int64(n)*int64(minSize) > int64(r.remaining()) {
		return 0, r.errorf("%d %s claimed in %d bytes", n, what, r.remaining())
	}
	return int(n), nil
}

func (c *checker) typeSection(r *reader) error {
	n, err := c.count(r, "types", c.lim.Types, 3, &c.use.types)
	if err != nil {
		return err
	}
	for range n {
		if b, err := r.byte(); err != nil {
			return err
		} else if b != 0x60 {
			r.pos--
			return r.errorf("function type starts with %#x, want 0x60", b)
		}
		var params int
		for i := range 2 { // parameters, then results
			k, err := vecLen(r, "value types", 1)
			if err != nil {
				return err
			}
			for range k {
				if err := valType(r); err != nil {
					return err
				}
			}
			if i == 0 {
				params = k
			}
		}
		c.typeParams = append(c.typeParams, uint32(params))
	}
	return nil
}

func valType(r *reader) error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	if !isValType(b) {
		r.pos--
		return r.errorf("%#x is not a WebAssembly 2.0 value type", b)
	}
	return nil
}

func (c *checker) typeIndex(r *reader) (uint32, error) {
	x, err := r.u32()
	if err != nil {
		return 0, err
	}
	if int(x) >= len(c.typeParams) {
		return 0, r.errorf("type index %d out of range (%d types)", x, len(c.typeParams))
	}
	return x, nil
}

var importKinds = [...]string{"function", "table", "memory", "global", "tag"}

func (c *checker) importSection(r *reader) error {
	n, err := c.count(r, "imports", c.lim.Imports, 4, &c.use.imports)
	if err != nil {
		return err
	}
	for range n {
		mod, err := r.name("import module name")
		if err != nil {
			return err
		}
		name, err := r.name("import name")
		if err != nil {
			return err
		}
		if !utf8.Valid(mod) || !utf8.Valid(name) {
			return r.errorf("import name is not UTF-8")
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		if kind != 0x00 {
			if int(kind) < len(importKinds) {
				return fmt.Errorf("module imports %s %s.%s: a guest may import only functions, and must define its own memory, tables and globals", importKinds[kind], mod, name)
			}
			r.pos--
			return r.errorf("unknown import kind %#x", kind)
		}
		if _, err := c.typeIndex(r); err != nil {
			return err
		}
		c.importedFuncs++
	}
	return nil
}

func (c *checker) functionSection(r *reader) error {
	n, err := c.count(r, "functions", c.lim.Functions, 1, &c.use.functions)
	if err != nil {
		return err
	}
	for range n {
		t, err := c.typeIndex(r)
		if err != nil {
			return err
		}
		c.funcTypes = append(c.funcTypes, t)
	}
	return nil
}

// limits reads a WebAssembly 2.0 limits pair: 0x00 min, or 0x01 min max.
// Shared (threads) limits are not accepted.
func limits(r *reader, what string) (initial, maximum uint32, hasMax bool, err error) {
	flag, err := r.byte()
	if err != nil {
		return 0, 0, false, err
	}
	if flag > 1 {
		r.pos--
		return 0, 0, false, r.errorf("%s limits flag %#x is not 0x00 or 0x01 (shared and 64-bit %ss are not supported)", what, flag, what)
	}
	if initial, err = r.u32(); err != nil {
		return 0, 0, false, err
	}
	if flag == 1 {
		if maximum, err = r.u32(); err != nil {
			return 0, 0, false, err
		}
		if maximum < initial {
			return 0, 0, false, r.errorf("%s maximum %d is below its minimum %d", what, maximum, initial)
		}
	}
	return initial, maximum, flag == 1, nil
}

func (c *checker) tableSection(r *reader) error {
	n, err := c.count(r, "tables", c.lim.Tables, 3, &c.use.tables)
	if err != nil {
		return err
	}
	for i := range n {
		b, err := r.byte()
		if err != nil {
			return err
		}
		if !isRefType(b) {
			r.pos--
			return r.errorf("table %d has element type %#x, want funcref (0x70) or externref (0x6f)", i, b)
		}
		initial, maximum, hasMax, err := limits(r, "table")
		if err != nil {
			return err
		}
		entries := initial
		if hasMax {
			entries = maximum
		}
		c.use.tableEntries = max(c.use.tableEntries, int(entries))
		if int64(entries) > int64(c.lim.TableEntries) {
			if hasMax {
				return fmt.Errorf("table %d declares a maximum of %d entries; the limit is %d", i, maximum, c.lim.TableEntries)
			}
			return fmt.Errorf("table %d declares %d entries and no maximum; the limit is %d", i, initial, c.lim.TableEntries)
		}
		c.tables = append(c.tables, table{hasMax: hasMax})
	}
	return nil
}

func (c *checker) memorySection(r *reader) error {
	n, err := vecLen(r, "memories", 2)
	if err != nil {
		return err
	}
	if n > 1 {
		return fmt.Errorf("module declares %d memories; at most one is allowed", n)
	}
	for range n {
		initial, maximum, hasMax, err := limits(r, "memory")
		if err != nil {
			return err
		}
		const maxPages = 1 << 16 // 4 GiB of 64 KiB pages
		if initial > maxPages || (hasMax && maximum > maxPages) {
			return r.errorf("memory of more than %d pages", maxPages)
		}
	}
	return nil
}

func (c *checker) globalSection(r *reader) error {
	n, err := c.count(r, "globals", c.lim.Globals, 4, &c.use.globals)
	if err != nil {
		return err
	}
	for range n {
		if err := valType(r); err != nil {
			return err
		}
		if mut, err := r.byte(); err != nil {
			return err
		} else if mut > 1 {
			r.pos--
			return r.errorf("global mutability %#x is not 0x00 or 0x01", mut)
		}
		if err := constExpr(r); err != nil {
			return err
		}
	}
	return nil
}

// constExpr reads a constant expression through its end. wazero's decoder
// accepts a sequence of these instructions (their number and types are
// checked later by its validation), so this does too.
func constExpr(r *reader) error {
	for {
		op, err := r.byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0b: // end
			return nil
		case 0x41: // i32.const
			_, err = r.signed(32)
		case 0x42: // i64.const
			_, err = r.signed(64)
		case 0x43: // f32.const
			err = r.skip(4)
		case 0x44: // f64.const
			err = r.skip(8)
		case 0x23, 0xd2: // global.get, ref.func
			_, err = r.u32()
		case 0xd0: // ref.null
			err = refType(r)
		case 0xfd: // v128.const
			var sub byte
			if sub, err = r.byte(); err == nil && sub != 0x0c {
				r.pos--
				return r.errorf("vector opcode %#x in a constant expression", sub)
			}
			if err == nil {
				err = r.skip(16)
			}
		default:
			r.pos--
			return r.errorf("opcode %#x in a constant expression", op)
		}
		if err != nil {
			return err
		}
	}
}

func refType(r *reader) error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	if !isRefType(b) {
		r.pos--
		return r.errorf("%#x is not a reference type", b)
	}
	return nil
}

func (c *checker) exportSection(r *reader) error {
	n, err := c.count(r, "exports", c.lim.Exports, 3, &c.use.exports)
	if err != nil {
		return err
	}
	for range n {
		name, err := r.name("export name")
		if err != nil {
			return err
		}
		if !utf8.Valid(name) {
			return r.errorf("export name is not UTF-8")
		}
		if kind, err := r.byte(); err != nil {
			return err
		} else if kind > 3 {
			r.pos--
			return r.errorf("unknown export kind %#x", kind)
		}
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) elementSection(r *reader) error {
	n, err := c.count(r, "element segments", c.lim.ElementSegments, 2, &c.use.elementSegments)
	if err != nil {
		return err
	}
	for range n {
		flags, err := r.u32()
		if err != nil {
			return err
		}
		if flags > 7 {
			return r.errorf("element segment flags %d are not 0 to 7", flags)
		}
		active, explicitTable, exprs := flags&1 == 0, flags&2 != 0, flags&4 != 0
		if active && explicitTable {
			if _, err := r.u32(); err != nil { // table index
				return err
			}
		}
		if active {
			if err := constExpr(r); err != nil { // offset
				return err
			}
		}
		if !active || explicitTable { // an element kind or reference type
			var err error
			if exprs {
				err = refType(r)
			} else {
				err = r.zero() // elemkind funcref
			}
			if err != nil {
				return err
			}
		}
		if exprs {
			k, err := vecLen(r, "element expressions", 2)
			if err != nil {
				return err
			}
			for range k {
				if err := constExpr(r); err != nil {
					return err
				}
			}
		} else {
			k, err := vecLen(r, "element function indices", 1)
			if err != nil {
				return err
			}
			for range k {
				if _, err := r.u32(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (c *checker) dataSection(r *reader) error {
	n, err := c.count(r, "data segments", c.lim.DataSegments, 2, &c.use.dataSegments)
	if err != nil {
		return err
	}
	if c.hasDataCount && uint32(n) != c.dataCount {
		return fmt.Errorf("malformed module: the data count section says %d data segments, the data section has %d", c.dataCount, n)
	}
	for range n {
		flags, err := r.u32()
		if err != nil {
			return err
		}
		switch flags {
		case 0: // active, memory 0
		case 1: // passive
		case 2: // active, explicit memory
			if _, err := r.u32(); err != nil {
				return err
			}
		default:
			return r.errorf("data segment flags %d are not 0, 1 or 2", flags)
		}
		if flags != 1 {
			if err := constExpr(r); err != nil {
				return err
			}
		}
		size, err := r.u32()
		if err != nil {
			return err
		}
		if _, err := r.sub(size, "data segment"); err != nil {
			return err
		}
	}
	return nil
}

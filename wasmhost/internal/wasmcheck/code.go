package wasmcheck

import "fmt"

func (c *checker) codeSection(r *reader) error {
	c.sawCode = true
	n, err := vecLen(r, "function bodies", 2)
	if err != nil {
		return err
	}
	if n != len(c.funcTypes) {
		return r.errorf("%d function bodies for %d declared functions", n, len(c.funcTypes))
	}
	for i, t := range c.funcTypes {
		idx := c.importedFuncs + i // in the function index space, as tools number them
		size, err := r.u32()
		if err != nil {
			return err
		}
		c.use.functionBodySize = max(c.use.functionBodySize, int(size))
		if int64(size) > int64(c.lim.FunctionBodySize) {
			return fmt.Errorf("function %d's body is %d bytes; the limit is %d", idx, size, c.lim.FunctionBodySize)
		}
		body, err := r.sub(size, fmt.Sprintf("function %d's body", idx))
		if err != nil {
			return err
		}
		if err := c.locals(&body, idx, c.typeParams[t]); err != nil {
			return err
		}
		if err := c.instructions(&body, idx); err != nil {
			return err
		}
	}
	return nil
}

// locals reads a function's local declarations and counts them, its
// parameters included. The sum cannot overflow a uint64 (at most 2³² groups
// of at most 2³²−1), and nothing is allocated for it: this is where
// wazero's decoder would allocate a slice of the declared length.
func (c *checker) locals(r *reader, idx int, params uint32) error {
	groups, err := vecLen(r, "local declarations", 2)
	if err != nil {
		return err
	}
	declared := uint64(0)
	for range groups {
		n, err := r.u32()
		if err != nil {
			return err
		}
		if err := valType(r); err != nil {
			return err
		}
		declared += uint64(n)
	}
	total := declared + uint64(params)
	c.use.locals = max(c.use.locals, int(min(total, 1<<40)))
	if total > uint64(c.lim.Locals) {
		if params == 0 {
			return fmt.Errorf("function %d declares %d locals; the limit is %d", idx, declared, c.lim.Locals)
		}
		return fmt.Errorf("function %d declares %d locals, %d with its parameters; the limit is %d", idx, declared, total, c.lim.Locals)
	}
	return nil
}

// How the immediates of a one-byte opcode are encoded.
type immediate uint8

const (
	invalid      immediate = iota // not an instruction wazero's default features accept
	none                          // no immediates
	blockType                     // block, loop, if: a block type; opens a block
	end                           // end: closes a block, or the function
	index                         // one u32 (a label, function, local, global or table index)
	twoIndex                      // two u32: call_indirect's type and table, a memarg's alignment and offset
	brTable                       // a vector of labels and a default label
	i32Const                      // a signed 32-bit LEB128
	i64Const                      // a signed 64-bit LEB128
	bytes4                        // f32.const
	bytes8                        // f64.const
	reserved                      // memory.size, memory.grow: one 0x00 byte
	typedSelect                   // select t: a vector of exactly one value type
	refNull                       // ref.null: a reference type
	miscPrefix                    // 0xfc: an LEB128 sub-opcode
	vectorPrefix                  // 0xfd: a SIMD sub-opcode
)

// opcodes is WebAssembly 2.0's one-byte opcode set, which is what wazero
// v1.12 accepts with its default features: no exception handling (0x06-0x0a,
// 0x18, 0x19, 0x1f), tail calls (0x12, 0x13), typed function references
// (0x14, 0x15, 0xd3-0xd6) or threads (0xfe).
var opcodes = func() (t [256]immediate) {
	set := func(from, to byte, imm immediate) {
		for op := int(from); op <= int(to); op++ {
			t[op] = imm
		}
	}
	set(0x00, 0x01, none)      // unreachable, nop
	set(0x02, 0x04, blockType) // block, loop, if
	t[0x05] = none             // else
	t[0x0b] = end              //
	set(0x0c, 0x0d, index)     // br, br_if
	t[0x0e] = brTable          //
	t[0x0f] = none             // return
	t[0x10] = index            // call
	t[0x11] = twoIndex         // call_indirect
	set(0x1a, 0x1b, none)      // drop, select
	t[0x1c] = typedSelect      //
	set(0x20, 0x26, index)     // local.*, global.*, table.get, table.set
	set(0x28, 0x3e, twoIndex)  // loads and stores: memarg
	set(0x3f, 0x40, reserved)  // memory.size, memory.grow
	t[0x41] = i32Const         //
	t[0x42] = i64Const         //
	t[0x43] = bytes4           //
	t[0x44] = bytes8           //
	set(0x45, 0xc4, none)      // numeric and sign-extension instructions
	t[0xd0] = refNull          //
	t[0xd1] = none             // ref.is_null
	t[0xd2] = index            // ref.func
	t[0xfc] = miscPrefix       //
	t[0xfd] = vectorPrefix     //
	return t
}()

// instructions reads a function's body to its final end, tracking the
// nesting of blocks and refusing deep nesting and large br_tables.
func (c *checker) instructions(r *reader, idx int) error {
	c.brTargets = 0
	depth := 0 // open blocks, loops and ifs, not counting the function's own
	for {
		at := r.pos
		op, err := r.byte()
		if err != nil {
			return fmt.Errorf("malformed module at offset %#x: function %d's body ends before its final end", at, idx)
		}
		var imm error
		switch opcodes[op] {
		case invalid:
			r.pos = at
			return r.errorf("function %d: opcode %#x is not a WebAssembly 2.0 instruction", idx, op)
		case none:
		case blockType:
			imm = c.blockType(r)
			depth++
			c.use.nestingDepth = max(c.use.nestingDepth, depth)
			if depth > c.lim.NestingDepth {
				return fmt.Errorf("function %d nests blocks, loops and ifs more than %d deep (at offset %#x); the limit is %d", idx, c.lim.NestingDepth, at, c.lim.NestingDepth)
			}
		case end:
			if depth == 0 {
				if r.remaining() != 0 {
					return r.errorf("function %d has %d bytes after its final end", idx, r.remaining())
				}
				return nil
			}
			depth--
		case index:
			_, imm = r.u32()
		case twoIndex:
			if _, imm = r.u32(); imm == nil {
				_, imm = r.u32()
			}
		case brTable:
			imm = c.brTable(r, idx, at)
		case i32Const:
			_, imm = r.signed(32)
		case i64Const:
			_, imm = r.signed(64)
		case bytes4:
			imm = r.skip(4)
		case bytes8:
			imm = r.skip(8)
		case reserved:
			imm = r.zero()
		case typedSelect:
			// wazero reads the vector length as one byte that must be 1.
			var n byte
			if n, imm = r.byte(); imm == nil && n != 1 {
				r.pos--
				imm = r.errorf("select has %d types, want 1", n)
			}
			if imm == nil {
				imm = valType(r)
			}
		case refNull:
			imm = refType(r)
		case miscPrefix:
			imm = c.misc(r, idx)
		case vectorPrefix:
			imm = c.vector(r, idx)
		}
		if imm != nil {
			return imm
		}
	}
}

// blockType reads a block type as wazero does, as a signed 33-bit LEB128:
// an empty type (-64), a value type (-1 to -5, -16, -17) or a type index.
func (c *checker) blockType(r *reader) error {
	v, err := r.signed(33)
	if err != nil {
		return err
	}
	switch {
	case v == -64, -5 <= v && v <= -1, v == -16, v == -17:
		return nil
	case v >= 0 && v < int64(len(c.typeParams)):
		return nil
	}
	return r.errorf("invalid block type %d", v)
}

// brTable reads a br_table. wazero's compiler takes time and memory
// superlinear in the targets of all br_tables in a function (500 br_tables
// of 1000 targets: 15 s and 1.2 GB allocated), so the bound is on their sum.
func (c *checker) brTable(r *reader, idx, at int) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	c.brTargets += int64(n) + 1 // the default label too
	c.use.brTableTargets = max(c.use.brTableTargets, int(min(c.brTargets, 1<<40)))
	if c.brTargets > int64(c.lim.BrTableTargets) {
		return fmt.Errorf("function %d's br_tables have more than %d targets in all (the br_table at offset %#x reaches %d); the limit is %d", idx, c.lim.BrTableTargets, at, c.brTargets, c.lim.BrTableTargets)
	}
	if int64(n)+1 > int64(r.remaining()) {
		return r.errorf("br_table claims %d targets in %d bytes", int64(n)+1, r.remaining())
	}
	for range int64(n) + 1 {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// misc reads an 0xfc instruction: saturating truncations, bulk memory and
// table instructions.
func (c *checker) misc(r *reader, idx int) error {
	at := r.pos - 1
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 7: // i32.trunc_sat_f32_s … i64.trunc_sat_f64_u
		return nil
	case sub == 8: // memory.init data 0x00
		if _, err := r.u32(); err != nil {
			return err
		}
		return r.zero()
	case sub == 9, sub == 13, sub == 16, sub == 17: // data.drop, elem.drop, table.size, table.fill
		_, err := r.u32()
		return err
	case sub == 10: // memory.copy 0x00 0x00
		if err := r.zero(); err != nil {
			return err
		}
		return r.zero()
	case sub == 11: // memory.fill 0x00
		return r.zero()
	case sub == 12, sub == 14: // table.init elem table, table.copy table table
		if _, err := r.u32(); err != nil {
			return err
		}
		_, err := r.u32()
		return err
	case sub == 15: // table.grow table
		t, err := r.u32()
		if err != nil {
			return err
		}
		if int(t) >= len(c.tables) {
			return r.errorf("function %d grows table %d, which does not exist", idx, t)
		}
		// A table with no declared maximum could grow to 2³² entries: its
		// size bound holds only while nothing grows it.
		if !c.tables[t].hasMax {
			return fmt.Errorf("function %d grows table %d (table.grow at offset %#x), which declares no maximum; a table that grows must declare a maximum of at most %d entries", idx, t, at, c.lim.TableEntries)
		}
		return nil
	}
	r.pos = at
	return r.errorf("function %d: opcode 0xfc %d is not a WebAssembly 2.0 instruction", idx, sub)
}

// SIMD sub-opcodes that the spec leaves unassigned.
var vectorGaps = map[byte]bool{
	0x9a: true, 0xa2: true, 0xa5: true, 0xa6: true, 0xaf: true, 0xb0: true, 0xb2: true,
	0xb3: true, 0xb4: true, 0xbb: true, 0xc2: true, 0xc5: true, 0xc6: true, 0xcf: true,
	0xd0: true, 0xd2: true, 0xd3: true, 0xd4: true, 0xe2: true, 0xee: true,
}

// vector reads an 0xfd (SIMD) instruction. The spec encodes the sub-opcode
// as an LEB128 u32, but wazero reads it as one byte. The two agree only on
// the shortest encoding: one byte below 0x80, or two bytes (b, 0x01) for b
// from 0x80 to 0xff, where wazero reads b and then the 0x01 as a nop. Any
// other encoding is refused, because wazero would parse the bytes after it
// as different instructions than this checker does (for example, hide
// blocks inside what this checker took for a v128.const).
func (c *checker) vector(r *reader, idx int) error {
	at := r.pos - 1
	sub, err := r.byte()
	if err != nil {
		return err
	}
	if sub >= 0x80 {
		if next, err := r.byte(); err != nil {
			return err
		} else if next != 0x01 {
			r.pos = at
			return r.errorf("function %d: SIMD opcode is not in its shortest encoding, or is not a WebAssembly 2.0 instruction", idx)
		}
	}
	memarg := func() error {
		if _, err := r.u32(); err != nil {
			return err
		}
		_, err := r.u32()
		return err
	}
	switch {
	case sub <= 0x0b, sub == 0x5c, sub == 0x5d: // loads, store, load_zero: memarg
		return memarg()
	case sub == 0x0c, sub == 0x0d: // v128.const, i8x16.shuffle
		return r.skip(16)
	case 0x15 <= sub && sub <= 0x22: // extract_lane, replace_lane: lane
		return r.skip(1)
	case 0x54 <= sub && sub <= 0x5b: // load_lane, store_lane: memarg, lane
		if err := memarg(); err != nil {
			return err
		}
		return r.skip(1)
	case vectorGaps[sub]:
		r.pos = at
		return r.errorf("function %d: opcode 0xfd %#x is not a WebAssembly 2.0 instruction", idx, sub)
	}
	return nil
}

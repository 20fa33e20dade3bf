package wasmcheck

import "bytes"

// A small assembler for the binary format, enough to build the modules the
// tests need byte by byte (most of them are malformed or hostile, which a
// text assembler would not produce).

// leb is v in unsigned LEB128.
func leb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		if v >>= 7; v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// vec is a vector of n copies of item.
func vec(n int, item []byte) []byte {
	return cat(leb(uint64(n)), bytes.Repeat(item, n))
}

func section(id byte, content ...[]byte) []byte {
	c := cat(content...)
	return cat([]byte{id}, leb(uint64(len(c))), c)
}

func module(sections ...[]byte) []byte {
	return cat([]byte("\x00asm\x01\x00\x00\x00"), cat(sections...))
}

// Parts of modules.
var (
	typeVoid  = []byte{0x60, 0, 0}           // () -> ()
	types     = section(1, vec(1, typeVoid)) // type 0: () -> ()
	blockVoid = []byte{0x02, 0x40}           // block with no result
	endOp     = []byte{0x0b}
)

// funcs is a module whose functions, all of type () -> (), have the given
// bodies (local declarations, then code through the final end).
func funcs(bodies ...[]byte) []byte {
	code := leb(uint64(len(bodies)))
	for _, b := range bodies {
		code = cat(code, leb(uint64(len(b))), b)
	}
	return module(types, section(3, vec(len(bodies), []byte{0})), section(10, code))
}

// localsBody is a body declaring n i32 locals, and no code.
func localsBody(n uint64) []byte { return cat([]byte{1}, leb(n), []byte{0x7f}, endOp) }

// nestedBody is a body with depth nested blocks.
func nestedBody(depth int) []byte {
	return cat([]byte{0}, bytes.Repeat(blockVoid, depth), bytes.Repeat(endOp, depth+1))
}

// brTablesBody is a body with one br_table for each count of targets, its
// default included, all of them to the function's own block.
func brTablesBody(targets ...int) []byte {
	b := []byte{0}
	for _, n := range targets {
		b = cat(b, []byte{0x41, 0x00, 0x0e}, leb(uint64(n-1)), bytes.Repeat([]byte{0}, n))
	}
	return cat(b, endOp)
}

// tableSection is a table section with one funcref table of min entries, and max
// if it is not negative.
func tableSection(min uint64, max int64) []byte {
	if max < 0 {
		return section(4, vec(1, cat([]byte{0x70, 0x00}, leb(min))))
	}
	return section(4, vec(1, cat([]byte{0x70, 0x01}, leb(min), leb(uint64(max)))))
}

// tableGrow is a module with the given table section and a function that
// grows table 0 by n entries.
func tableGrow(tables []byte, n uint32) []byte {
	body := cat([]byte{0, 0xd0, 0x70, 0x41}, sleb(int64(int32(n))), []byte{0xfc, 15, 0, 0x1a}, endOp)
	return module(types, section(3, vec(1, []byte{0})), tables, section(10, leb(1), leb(uint64(len(body))), body))
}

// sleb is v in signed LEB128.
func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// importOf is an import section with one import of the given kind and
// description.
func importOf(kind byte, desc ...byte) []byte {
	return section(2, leb(1), []byte{3}, []byte("env"), []byte{1}, []byte("x"), []byte{kind}, desc)
}

// Package compilebomb builds WebAssembly modules that are cheap to send and
// costly to compile, for the tests of the bounds on compiling
// (wasmhost.WithCompileWorker and the server's install queue). The modules
// are valid: they only define functions of type () -> () and export nothing,
// so a gadget Runtime refuses them, but only after compiling them.
package compilebomb

// NestedBlocks is a module of funcs functions, each depth blocks deep. No
// part of it need stand out (real Go code nests a thousand deep, and real Go
// guests have thousands of functions), yet compiling 2000 functions 1000
// deep (6 MB) takes about 6 s of CPU, and 1000 functions 4000 deep (12 MB)
// about 45 s (ten times that under the race detector), within the static
// limits of wasmhost.DefaultModuleLimits.
func NestedBlocks(funcs, depth int) []byte {
	body := []byte{0} // no locals
	for range depth {
		body = append(body, 0x02, 0x40) // block with no result
	}
	for range depth + 1 {
		body = append(body, 0x0b) // end
	}
	return module(funcs, body)
}

// Locals is a module of one function that declares n i32 locals: wazero's
// decoder allocates about 8 bytes for each before anything is compiled, so
// 10⁸ of them cost 800 MB in 203 bytes. A static validator refuses it; tests
// of what stops the bombs a validator cannot foresee send it past the
// validator.
func Locals(n int) []byte {
	body := append([]byte{1}, uleb(n)...) // one run of locals
	body = append(body, 0x7f, 0x0b)       // of i32; end
	return module(1, body)
}

// module is a module of funcs functions of type () -> (), each with body
// (its locals and code).
func module(funcs int, body []byte) []byte {
	section := func(id byte, content []byte) []byte {
		return append(append([]byte{id}, uleb(len(content))...), content...)
	}
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, section(1, []byte{1, 0x60, 0, 0})...) // type 0: () -> ()
	fns := uleb(funcs)
	for range funcs {
		fns = append(fns, 0) // of type 0
	}
	m = append(m, section(3, fns)...)
	code := uleb(funcs)
	for range funcs {
		code = append(code, uleb(len(body))...)
		code = append(code, body...)
	}
	return append(m, section(10, code)...)
}

// uleb is n in unsigned LEB128.
func uleb(n int) []byte {
	var b []byte
	for {
		c := byte(n & 0x7f)
		if n >>= 7; n == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

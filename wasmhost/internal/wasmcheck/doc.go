// Package wasmcheck checks a WebAssembly module against resource limits
// before wazero decodes or compiles it.
//
// wazero trusts the counts a module declares: its decoder allocates about
// eight bytes per declared local before it reads a body (a 203-byte module
// declaring 10⁹ locals exhausts the host's memory), its compiler takes time
// and memory superlinear in block nesting and br_table size, and it lets a
// table grow to 2³² entries outside every memory limit. Check parses the
// binary format (WebAssembly 2.0, written from the spec) in one linear pass,
// allocating only for entries it has actually read, and refuses a module
// that exceeds Limits with an error naming the limit and where it was
// exceeded.
//
// # What is accepted
//
// Exactly what wazero v1.12 accepts with its default features (WebAssembly
// 2.0: multi-value, bulk memory, reference types, SIMD, sign extension,
// non-trapping conversions, mutable globals), decoded just as wazero
// decodes it, so that both see the same instructions and the same nesting.
// Where wazero departs from the spec (it reads a SIMD sub-opcode and the
// reserved bytes as single bytes) only encodings on which both agree are
// accepted. Anything else, such as exception handling, tail calls or
// threads, is refused. If the runtime ever enables more features, this
// package must learn their encodings first.
//
// Check does not type-check code or resolve most indices: wazero's own
// validation does that afterwards, and cheaply. Check's job is to make sure
// that what wazero then decodes is bounded.
//
// # Rules beyond counts
//
//   - Imports are functions only. A guest must define its own memory,
//     tables and globals; imports of any other kind are refused.
//   - At most one memory.
//   - Tables: at most Limits.Tables, each able to hold at most
//     Limits.TableEntries entries, ever. A table with a declared maximum is
//     bounded by it (wazero's table.grow fails past it). A table without
//     one, which is what Go's wasip1 linker emits (one funcref table of
//     4096 + function count entries, and Go never grows it), is bounded by
//     its initial size, so any table.grow of such a table is refused.
package wasmcheck

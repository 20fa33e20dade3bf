package wasmcheck

import "fmt"

// reader is a cursor over part of a module, [pos, end) of b. Every read
// checks bounds and none allocates, so a module that claims more than it
// holds is refused at the first byte it does not have.
type reader struct {
	b   []byte // the whole module: offsets in errors are into it
	pos int
	end int
}

func (r *reader) remaining() int { return r.end - r.pos }

// sub returns a reader over the next n bytes and skips r past them.
func (r *reader) sub(n uint32, what string) (reader, error) {
	if int64(n) > int64(r.remaining()) {
		return reader{}, r.errorf("%s claims %d bytes but only %d remain", what, n, r.remaining())
	}
	s := reader{b: r.b, pos: r.pos, end: r.pos + int(n)}
	r.pos += int(n)
	return s, nil
}

// errorf reports malformed input at the current offset.
func (r *reader) errorf(format string, args ...any) error {
	return fmt.Errorf("malformed module at offset %#x: %s", r.pos, fmt.Sprintf(format, args...))
}

func (r *reader) byte() (byte, error) {
	if r.pos >= r.end {
		return 0, r.errorf("unexpected end")
	}
	b := r.b[r.pos]
	r.pos++
	return b, nil
}

func (r *reader) skip(n int) error {
	if n > r.remaining() {
		return r.errorf("unexpected end: %d bytes needed, %d remain", n, r.remaining())
	}
	r.pos += n
	return nil
}

// zero reads a reserved byte, which must be a single 0x00 (wazero reads
// these as one byte, so a longer encoding of zero would be parsed
// differently there).
func (r *reader) zero() error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	if b != 0 {
		r.pos--
		return r.errorf("reserved byte is %#x, want 0x00", b)
	}
	return nil
}

// u32 reads an unsigned LEB128 integer of at most 32 bits, in at most 5
// bytes, as the spec requires.
func (r *reader) u32() (uint32, error) {
	start := r.pos
	var v uint32
	for i := 0; ; i++ {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == 4 && b&0xf0 != 0 { // a fifth byte holds 4 bits and ends the integer
			r.pos = start
			return 0, r.errorf("integer too large for 32 bits, or longer than 5 bytes")
		}
		v |= uint32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return v, nil
		}
	}
}

// signed reads a signed LEB128 integer of at most bits bits (32, 33 or 64):
// at most ceil(bits/7) bytes, and the unused bits of a last byte must
// extend the sign.
func (r *reader) signed(bits int) (int64, error) {
	start := r.pos
	maxBytes := (bits + 6) / 7
	var v int64
	for i := 0; i < maxBytes; i++ {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int64(b&0x7f) << (7 * i)
		if b&0x80 != 0 {
			continue
		}
		if i == maxBytes-1 {
			used := bits - 7*i // value bits in this byte
			unused := byte(0x7f) &^ (1<<used - 1)
			if sign := b & (1 << (used - 1)); (sign == 0 && b&unused != 0) || (sign != 0 && b&unused != unused) {
				r.pos = start
				return 0, r.errorf("integer too large for %d bits", bits)
			}
		}
		if shift := 7 * (i + 1); shift < 64 && b&0x40 != 0 {
			v |= -1 << shift
		}
		return v, nil
	}
	r.pos = start
	return 0, r.errorf("integer representation longer than %d bytes", maxBytes)
}

// name reads a vec(byte) and returns it without copying.
func (r *reader) name(what string) ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	s, err := r.sub(n, what)
	if err != nil {
		return nil, err
	}
	return s.b[s.pos:s.end], nil
}

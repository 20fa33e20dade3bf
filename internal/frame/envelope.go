package frame

// A hand-written codec for the two frames a guest handles on every call it
// makes to the host: the call frame it sends and the return frame that
// answers it. Everything else goes through go-capnp (New, Decode, …).
//
// Why: in a wasm guest, go-capnp's generic message, arena and pointer code
// (with its read-limit atomics and allocations) was most of the guest's
// share of a guest → host call. The frames' envelopes have a fixed shape,
// so writing and checking them by hand costs a few loads and stores.
//
// What keeps it in step with the schema (schema/abi/abi.capnp): the
// layouts below are those of docs/ABI.md §4.2, and the tests decode every
// frame AppendCall writes with Decode, and check that ReturnContent agrees
// with Decode on every frame (FuzzReturnContentAgreesWithDecode). The
// encoding stays the standard one, so the host, which decodes with
// go-capnp, cannot tell these frames from New's.

import (
	"encoding/binary"

	"capnproto.org/go/capnp/v3"
)

// The words of a call frame's envelope, in segment 0, in this order.
const (
	wRoot      = iota // root pointer → Frame
	wFrameData        // Frame: union tag
	wFramePtr         // Frame.call → Call
	wCallData0        // Call: target, methodId
	wCallData1        // Call: interfaceId
	wCallPtr          // Call.params → Payload
	wContent          // Payload.content → the params struct
	wCapTable         // Payload.capTable → the descriptors
	envelopeWords
)

// Union tags of Frame and CapDescriptor (abi.Frame_Which_*,
// abi.CapDescriptor_Which_*).
const (
	tagCall   = 0
	tagReturn = 1

	descNone  = 0
	descGuest = 1
	descHost  = 2
)

// AppendCall appends to dst a single-segment call frame:
// Frame{call: {target, m, params: {content, capTable: caps}}}.
//
// content holds the params struct, of size sz, at its start, followed by
// every object the struct points to: the words after the root pointer of a
// single-segment message whose first object is the struct. Pointers within
// it are relative, so it moves as a whole. caps is the payload's
// capability table; a payload with none gets a null table, which reads as
// empty. len(content) must be a multiple of 8.
func AppendCall(dst []byte, target uint32, m capnp.Method, content []byte, sz capnp.ObjectSize, caps []Ref) []byte {
	words := envelopeWords + len(content)/8
	if len(caps) > 0 {
		words += 1 + len(caps)
	}
	start := len(dst)
	dst = append(dst, make([]byte, 8+8*envelopeWords)...)
	hdr := dst[start:]
	binary.LittleEndian.PutUint32(hdr[0:], 0) // one segment
	binary.LittleEndian.PutUint32(hdr[4:], uint32(words))
	seg := hdr[8:]
	put := func(w int, v uint64) { binary.LittleEndian.PutUint64(seg[8*w:], v) }
	put(wRoot, structPointer(wRoot, wFrameData, 1, 1))
	put(wFrameData, tagCall)
	put(wFramePtr, structPointer(wFramePtr, wCallData0, 2, 1))
	put(wCallData0, uint64(target)|uint64(m.MethodID)<<32)
	put(wCallData1, m.InterfaceID)
	put(wCallPtr, structPointer(wCallPtr, wContent, 0, 2))
	dataWords, ptrs := uint16((sz.DataSize+7)/8), sz.PointerCount
	if dataWords == 0 && ptrs == 0 {
		// An empty struct is encoded with offset -1, so that it is not
		// null; it takes no words.
		put(wContent, structPointer(wContent, wContent, 0, 0))
	} else {
		put(wContent, structPointer(wContent, envelopeWords, dataWords, ptrs))
	}
	if len(caps) > 0 {
		tag := envelopeWords + len(content)/8
		put(wCapTable, uint64(uint32(tag-wCapTable-1)<<2)|1|7<<32|uint64(len(caps))<<35)
	}
	dst = append(dst, content...)
	if len(caps) > 0 {
		// A composite list: its tag word (shaped like a struct pointer
		// whose offset is the element count), then one word per
		// CapDescriptor.
		dst = binary.LittleEndian.AppendUint64(dst, uint64(uint32(len(caps))<<2)|1<<32)
		for _, r := range caps {
			var d uint64 // none
			switch r.Kind {
			case Guest:
				d = descGuest | uint64(r.Index)<<32
			case Host:
				d = descHost | uint64(r.Index)<<32
			}
			dst = binary.LittleEndian.AppendUint64(dst, d)
		}
	}
	return dst
}

// structPointer encodes a struct pointer in word at to a struct at word
// target (both in one segment).
func structPointer(at, target int, dataWords, ptrs uint16) uint64 {
	return uint64(uint32(int32(target-at-1))<<2) | uint64(dataWords)<<32 | uint64(ptrs)<<48
}

// ReturnContent reports whether b is a return frame in the shape a host
// answers most calls with: one segment, no capabilities, its content a
// struct or null. If so, it rewrites b's root pointer to point at the
// content, so that a message over b[8:] reads the results as its root
// (capnp.Message.Root); the frame then no longer reads as a frame. If not,
// b is left as it was and the caller decodes it with Decode, which handles
// every frame.
//
// It checks every pointer it follows against the segment's bounds; the
// caller's reads of the content go through go-capnp, which checks the
// rest. The one way the content can read differently than through Decode
// is an object of it that overlaps the root pointer, which no encoder
// writes (go-capnp allocates every object after it).
func ReturnContent(b []byte, lim Limits) bool {
	if len(b) < 16 || (lim.MaxBytes > 0 && len(b) > lim.MaxBytes) ||
		binary.LittleEndian.Uint32(b) != 0 ||
		uint64(binary.LittleEndian.Uint32(b[4:]))*8 != uint64(len(b)-8) {
		return false
	}
	seg := b[8:]
	frame, data, ptrs, ok := follow(seg, wRoot)
	if !ok || data < 1 || ptrs < 1 || binary.LittleEndian.Uint16(seg[8*frame:]) != tagReturn {
		return false
	}
	payload, data, ptrs, ok := follow(seg, frame+data)
	if !ok || ptrs < 1 {
		return false
	}
	content := payload + data // the pointer section: content, capTable
	if ptrs >= 2 && !noCaps(seg, content+1) {
		return false
	}
	var root uint64 // a null content: the root becomes null too
	if binary.LittleEndian.Uint64(seg[8*content:]) != 0 {
		target, data, ptrs, ok := follow(seg, content)
		switch {
		case !ok || target == wRoot:
			// Not a struct, or one overlapping the root pointer about to
			// be rewritten.
			return false
		case data == 0 && ptrs == 0:
			root = structPointer(wRoot, wRoot, 0, 0) // empty, not null
		default:
			root = structPointer(wRoot, target, uint16(data), uint16(ptrs))
		}
	}
	binary.LittleEndian.PutUint64(seg, root)
	return true
}

// follow reads the struct pointer in word at of seg and returns the word
// its struct starts at and its size, or ok false if the pointer is not a
// non-null struct pointer whose struct lies within seg.
func follow(seg []byte, at int) (target, data, ptrs int, ok bool) {
	p := binary.LittleEndian.Uint64(seg[8*at:])
	if p == 0 || p&3 != 0 {
		return 0, 0, 0, false
	}
	target = at + 1 + int(int32(uint32(p))>>2)
	data, ptrs = int(uint16(p>>32)), int(uint16(p>>48))
	if target < 0 || target+data+ptrs > len(seg)/8 {
		return 0, 0, 0, false
	}
	return target, data, ptrs, true
}

// noCaps reports whether the list pointer in word at of seg is null or an
// in-bounds composite list of no elements.
func noCaps(seg []byte, at int) bool {
	p := binary.LittleEndian.Uint64(seg[8*at:])
	if p == 0 {
		return true
	}
	if p&3 != 1 || (p>>32)&7 != 7 || p>>35 != 0 { // composite, of no words
		return false
	}
	tag := at + 1 + int(int32(uint32(p))>>2)
	if tag < 0 || tag >= len(seg)/8 {
		return false
	}
	t := binary.LittleEndian.Uint64(seg[8*tag:])
	return t&3 == 0 && int32(uint32(t))>>2 == 0
}

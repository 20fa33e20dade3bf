package rpcguard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
)

// A header may claim any size; what the reader allocates follows the bytes
// that arrived. capnp.Decoder allocates the claimed size up front, so a
// 9-byte message cost the server 32 MiB until its body timed out.
func TestReadFrameAllocatesWhatArrivesNotWhatTheHeaderClaims(t *testing.T) {
	const claimed = 32 << 20
	var frame bytes.Buffer
	binary.Write(&frame, binary.LittleEndian, [2]uint32{0, claimed / 8})
	frame.Write(make([]byte, 100)) // then the peer stalls
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readFrame(&frame, func() uint64 { return claimed + 8 }, unbounded)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("readFrame of a truncated message: %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*readChunk {
		t.Errorf("reading 108 bytes of a message claiming %d allocated %d bytes", claimed, got)
	}
}

func TestReadFrameRefusesAMessageOverTheLimitFromItsHeader(t *testing.T) {
	for name, header := range map[string][]uint32{
		"one large segment":              {0, 1 << 20},
		"a segment table over the limit": {1 << 30},
	} {
		t.Run(name, func(t *testing.T) {
			var frame bytes.Buffer
			binary.Write(&frame, binary.LittleEndian, header)
			_, err := readFrame(&frame, func() uint64 { return 64 << 10 }, unbounded)
			if !errors.Is(err, ErrLimit) {
				t.Errorf("err = %v, want ErrLimit", err)
			}
		})
	}
}

// Frames of 1 to 4 segments come back byte for byte, header padding
// included, and the stream stays aligned on the next frame.
func TestReadFrameReadsMultiSegmentFramesWithTheirPadding(t *testing.T) {
	var stream bytes.Buffer
	var want [][]byte
	for segs := 1; segs <= 4; segs++ {
		var f bytes.Buffer
		binary.Write(&f, binary.LittleEndian, uint32(segs-1))
		for i := range segs {
			binary.Write(&f, binary.LittleEndian, uint32(i+1))
		}
		if f.Len()%8 != 0 {
			f.Write(make([]byte, 4))
		}
		for i := range segs {
			f.Write(bytes.Repeat([]byte{byte(segs)}, 8*(i+1)))
		}
		want = append(want, f.Bytes())
		stream.Write(f.Bytes())
	}
	for i, w := range want {
		got, err := readFrame(&stream, func() uint64 { return 1 << 20 }, unbounded)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("frame %d: read %x, want %x", i, got, w)
		}
	}
}

// unbounded is the receive budget of a Transport alone: none.
func unbounded() *recvBudget { return nil }

// TestAMessageOfTheLargestSizeFitsTheReceiveBudgets: a server that allows
// larger messages than its receive budgets (the server starts from
// DefaultLimits, 256 MiB and 64 MiB, and an operator may raise the message
// size past them) would refuse every such message, even with nothing else
// arriving; the budgets grow to hold one.
func TestAMessageOfTheLargestSizeFitsTheReceiveBudgets(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxMessageSize = 300 << 20
	lim = lim.withDefaults()
	if lim.MaxReceiving < lim.MaxMessageSize || lim.MaxUserReceiving < lim.MaxMessageSize {
		t.Fatalf("receive budgets %d (server) and %d (per user) for messages of up to %d bytes", lim.MaxReceiving, lim.MaxUserReceiving, lim.MaxMessageSize)
	}
	user := newUserRecv("u", lim.MaxUserReceiving, newServerRecv(lim.MaxReceiving))
	if err := user.take(int(lim.MaxMessageSize)); err != nil {
		t.Fatalf("a whole message of the largest size, nothing else arriving: %v", err)
	}
}

package wasmhost_test

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/gadgetd/gadgetd/wasmhost"
)

// subscription is one WASI subscription: for a clock, arg is the timeout in
// ns and flags its subclockflags; for fd_read and fd_write, arg is the fd.
type subscription struct {
	userData  uint64
	eventType byte
	arg       int64
	flags     uint16
}

type event struct {
	userData  uint64
	errno     uint16
	eventType byte
}

// poll writes subs into a fresh memory and runs poll_oneoff on them.
func poll(t *testing.T, subs []subscription, n uint32) (errno uint64, nevents uint32, events []event) {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	mod, err := r.Instantiate(ctx, wat(t, `(module (memory 1))`))
	if err != nil {
		t.Fatal(err)
	}
	mem := mod.Memory()
	const in, out, result = 0, 0x4000, 0x8000
	le := binary.LittleEndian
	for i, s := range subs {
		b := make([]byte, 48)
		le.PutUint64(b, s.userData)
		b[8] = s.eventType
		if s.eventType == 0 {
			le.PutUint64(b[24:], uint64(s.arg))
			le.PutUint16(b[40:], s.flags)
		} else {
			le.PutUint32(b[16:], uint32(s.arg))
		}
		mem.Write(in+uint32(i)*48, b)
	}
	errno = wasmhost.PollOneoff(ctx, mem, in, out, n, result)
	nevents, _ = mem.ReadUint32Le(result)
	for i := range uint32(len(subs)) {
		b, _ := mem.Read(out+i*32, 32)
		events = append(events, event{le.Uint64(b), le.Uint16(b[8:]), b[10]})
	}
	return errno, nevents, events
}

// Guards: pollOneoff (wasi.go) keeps wazero's poll_oneoff semantics for the
// descriptors a gadget has (stdin at EOF, stdout, stderr), except that it
// returns as soon as an fd event is ready instead of sleeping (forever, if
// there is no clock), as POSIX poll does.
func TestPollOneoffKeepsWASISemantics(t *testing.T) {
	const (
		clock, fdRead, fdWrite         = 0, 1, 2
		einval, efault, ebadf, enotsup = 28, 21, 8, 58
	)
	for _, tc := range []struct {
		name   string
		subs   []subscription
		n      uint32
		errno  uint64
		events []event
	}{
		{"no subscriptions", nil, 0, einval, nil},
		{"a count that wraps around", nil, 0x0555_5556, efault, nil},
		{"a short relative clock", []subscription{{7, clock, 1e6, 0}}, 1, 0, []event{{7, 0, clock}}},
		{"an absolute clock", []subscription{{7, clock, 1e6, 1}}, 1, enotsup, nil},
		{"unknown clock flags", []subscription{{7, clock, 1e6, 2}}, 1, einval, nil},
		{"an unknown event type", []subscription{{7, 9, 0, 0}}, 1, einval, nil},
		{"a negative fd", []subscription{{7, fdRead, -1, 0}}, 1, ebadf, nil},
		{"stdin ready at once, beside an endless clock",
			[]subscription{{1, fdRead, 0, 0}, {2, clock, 1<<63 - 1, 0}}, 2, 0,
			[]event{{1, 0, fdRead}, {2, 0, clock}}},
		{"stdout and stderr readable, not writable", []subscription{{1, fdRead, 1, 0}, {2, fdWrite, 2, 0}}, 2, 0,
			[]event{{1, 0, fdRead}, {2, enotsup, fdWrite}}},
		{"no other descriptors", []subscription{{1, fdRead, 3, 0}, {2, fdWrite, 64, 0}}, 2, 0,
			[]event{{1, ebadf, fdRead}, {2, ebadf, fdWrite}}},
	} {
		errno, nevents, events := poll(t, tc.subs, tc.n)
		if errno != tc.errno {
			t.Errorf("%s: errno %d, want %d", tc.name, errno, tc.errno)
			continue
		}
		if errno != 0 {
			continue
		}
		if int(nevents) != len(tc.events) {
			t.Errorf("%s: %d events, want %d", tc.name, nevents, len(tc.events))
		}
		for i, want := range tc.events {
			if events[i] != want {
				t.Errorf("%s: event %d = %+v, want %+v", tc.name, i, events[i], want)
			}
		}
	}
}

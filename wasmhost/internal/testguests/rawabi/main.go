//go:build wasip1

// Command rawabi is a test gadget that speaks the guest ABI (docs/ABI.md)
// by hand, without the guest SDK, so it can do what the SDK never would:
// name host capability indices it was never given, use indices it released,
// hand back forged capability tables, and break the frame protocol.
//
// It answers Guest.open with a session (guest export 1). The session answers
// any call to Storage.get(key) by running the scenario named by key and
// returning a transcript of what the host answered as value:
//
//	call:N            Host.log on host import N
//	grab              Host.storage(), keep the import, put "grabbed" through it
//	put:N:KEY         Storage.put(KEY) on host import N
//	stale             Host.storage() as S, put through S, release S, put
//	                  through S again, then Host.storage() again
//	forge-param:N     Storage.put through a fresh storage import, with a
//	                  params capability table that names host import N
//	forge-result:N    answers this call with a capability table naming host
//	                  import N
//	garbage-answer    answers this call with bytes that are not a frame
//	garbage-exchange  sends the host bytes that are not a frame
//	take-twice        takes the same answer twice
//	captable:N        answers with a capability table of N entries
//	wild-answer       answers with a pointer outside its memory
//	arm-wild-alloc    makes the next gadgetd_alloc return a pointer outside
//	                  its memory
//	exchange-huge     calls exchange with a size of 4 GiB
//	arm-release       makes the next release frame the host sends put
//	                  "release-key" in storage and then trap
//	hoard             calls Host.storage() until the host refuses, keeping
//	                  every import
//	throw:T           answers this call with an exception frame of type T
//	                  (a number, as abi.ExceptionType; 0 is what a guest
//	                  that sets no type sends)
//	host-method:M     calls method @M of the Host (import 0)
//	export            answers with results whose pointer 0 is a capability to
//	                  guest export 2, an object that is not a session (this
//	                  guest answers no call on it)
//
// Transcripts show a host exception as "exception: REASON", with its type in
// parentheses unless it is failed: "exception (disconnected): REASON".
//
// and to Counter.watch(listener) (internal/testcounter) by calling
// listener.changed(1) and, when the host delivers a call into it while it
// waits, abandoning both: it answers watch at once.
package main

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/schema/abi"
)

//go:wasmimport gadgetd exchange
func exchange(ptr, size uint32) uint32

//go:wasmimport gadgetd take
func take(ptr uint32)

//go:wasmimport gadgetd release
func release(index uint32)

func main() {}

// in is the buffer handed to the host by gadgetd_alloc; out keeps the last
// answer alive until the host has read it.
var in, out []byte

// wildAlloc and wildAnswer make the next gadgetd_alloc, or the answer to
// the current call, point outside linear memory.
var wildAlloc, wildAnswer bool

//go:wasmexport gadgetd_alloc
func gadgetdAlloc(size uint32) uint32 {
	if wildAlloc {
		wildAlloc = false
		return 0xfffffff0
	}
	in = make([]byte, size)
	return addr(in)
}

//go:wasmexport gadgetd_deliver
func gadgetdDeliver(ptr, size uint32) uint64 {
	out = deliver(in[:size])
	if wildAnswer {
		wildAnswer = false
		return 0xffff0000<<32 | 0x10000
	}
	return uint64(addr(out))<<32 | uint64(len(out))
}

func addr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// newFrame starts a frame message.
func newFrame() (*capnp.Segment, abi.Frame) {
	_, seg := must2(capnp.NewMessage(capnp.SingleSegment(nil)))
	return seg, must(abi.NewRootFrame(seg))
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

func encode(f abi.Frame) []byte { return must(f.Message().Marshal()) }

func decode(b []byte) abi.Frame {
	return must(abi.ReadRootFrame(must(capnp.Unmarshal(b))))
}

func exceptionFrame(reason string) []byte {
	return typedExceptionFrame(abi.ExceptionType_failed, reason)
}

func typedExceptionFrame(typ abi.ExceptionType, reason string) []byte {
	_, f := newFrame()
	f.SetException()
	f.Exception().SetType(typ)
	must(0, f.Exception().SetReason(reason))
	return encode(f)
}

// returnFrame answers a call with content and the capability table caps
// (positive: host import, negative: guest export -n).
func returnFrame(build func(seg *capnp.Segment) capnp.Struct, caps ...int64) []byte {
	seg, f := newFrame()
	p := must(f.NewReturn())
	must(0, p.SetContent(build(seg).ToPtr()))
	table := must(p.NewCapTable(int32(len(caps))))
	for i, c := range caps {
		if c < 0 {
			table.At(i).SetGuest(uint32(-c))
		} else {
			table.At(i).SetHost(uint32(c))
		}
	}
	return encode(f)
}

// getResult is the content of a Storage.get answer carrying text.
func getResult(text string) func(*capnp.Segment) capnp.Struct {
	return func(seg *capnp.Segment) capnp.Struct {
		r := must(schema.NewStorage_get_Results(seg))
		r.SetFound(true)
		must(0, r.SetValue([]byte(text)))
		return capnp.Struct(r)
	}
}

// armed makes the next release frame write to storage and then trap.
var armed bool

func deliver(b []byte) []byte {
	f := decode(b)
	if f.Which() != abi.Frame_Which_call {
		// A release: nothing to free, unless armed.
		if armed {
			if s, err := storage(); err == nil {
				put(s, "release-key")
			}
			panic("rawabi: trapping while handling a release, after a storage write")
		}
		return nil
	}
	call := must(f.Call())
	switch {
	case call.Target() == 0 && call.InterfaceId() == schema.Guest_TypeID:
		// Guest.open: the session is guest export 1.
		return returnFrame(func(seg *capnp.Segment) capnp.Struct {
			r := must(schema.NewGuest_open_Results(seg))
			must(0, capnp.Struct(r).SetPtr(0, capnp.NewInterface(seg, 0).ToPtr()))
			return capnp.Struct(r)
		}, -1)
	case call.Target() == 1 && call.InterfaceId() == schema.Storage_TypeID && call.MethodId() == 0:
		params := must(call.Params())
		key := must(schema.Storage_get_Params(must(params.Content()).Struct()).Key())
		return scenario(key)
	case call.Target() == 1 && call.InterfaceId() == counterpb.Counter_TypeID && call.MethodId() == 2:
		return abandon(must(call.Params()))
	default:
		return exceptionFrame(fmt.Sprintf("rawabi: no method @%d of %#x on object %d", call.MethodId(), call.InterfaceId(), call.Target()))
	}
}

// callHost sends a call frame to the host and returns its answer frame.
func callHost(target uint32, iface uint64, method uint16, build func(*capnp.Segment) capnp.Struct, caps ...uint32) abi.Frame {
	seg, f := newFrame()
	c := must(f.NewCall())
	c.SetTarget(target)
	c.SetInterfaceId(iface)
	c.SetMethodId(method)
	p := must(c.NewParams())
	if build != nil {
		must(0, p.SetContent(build(seg).ToPtr()))
	}
	table := must(p.NewCapTable(int32(len(caps))))
	for i, h := range caps {
		table.At(i).SetHost(h)
	}
	return decode(send(encode(f)))
}

func send(b []byte) []byte {
	n := exchange(addr(b), uint32(len(b)))
	buf := make([]byte, n)
	take(addr(buf))
	return buf
}

// outcome describes an answer frame from the host.
func outcome(f abi.Frame) string {
	switch f.Which() {
	case abi.Frame_Which_return:
		return "returned"
	case abi.Frame_Which_exception:
		e := f.Exception()
		if e.Type() != abi.ExceptionType_failed {
			return fmt.Sprintf("exception (%v): %s", e.Type(), must(e.Reason()))
		}
		return "exception: " + must(e.Reason())
	default:
		return "unexpected " + f.Which().String()
	}
}

func logCall(target uint32) abi.Frame {
	return callHost(target, schema.Host_TypeID, 1, func(seg *capnp.Segment) capnp.Struct {
		p := must(schema.NewHost_log_Params(seg))
		must(0, p.SetText("rawabi: log through host import "+strconv.Itoa(int(target))))
		return capnp.Struct(p)
	})
}

// storage calls Host.storage() and returns the host import index of the
// Storage it answers with.
func storage() (uint32, error) {
	f := callHost(0, schema.Host_TypeID, 0, nil)
	if f.Which() != abi.Frame_Which_return {
		return 0, fmt.Errorf("Host.storage: %s", outcome(f))
	}
	caps := must(must(f.Return()).CapTable())
	if caps.Len() != 1 || caps.At(0).Which() != abi.CapDescriptor_Which_host {
		return 0, fmt.Errorf("Host.storage: unexpected capability table")
	}
	return caps.At(0).Host(), nil
}

func put(target uint32, key string, caps ...uint32) abi.Frame {
	return callHost(target, schema.Storage_TypeID, 1, func(seg *capnp.Segment) capnp.Struct {
		p := must(schema.NewStorage_put_Params(seg))
		must(0, p.SetKey(key))
		must(0, p.SetValue([]byte("rawabi")))
		return capnp.Struct(p)
	}, caps...)
}

func atoi(s string) uint32 { return uint32(must(strconv.ParseUint(s, 10, 32))) }

func scenario(key string) []byte {
	name, arg, _ := strings.Cut(key, ":")
	var text string
	switch name {
	case "call":
		text = outcome(logCall(atoi(arg)))
	case "grab":
		s, err := storage()
		if err != nil {
			return exceptionFrame(err.Error())
		}
		text = fmt.Sprintf("storage=%d put: %s", s, outcome(put(s, "grabbed")))
	case "put":
		target, k, _ := strings.Cut(arg, ":")
		text = outcome(put(atoi(target), k))
	case "stale":
		s1, err := storage()
		if err != nil {
			return exceptionFrame(err.Error())
		}
		before := outcome(put(s1, "stale-before"))
		release(s1)
		after := outcome(put(s1, "stale-after"))
		s2, err := storage()
		if err != nil {
			return exceptionFrame(err.Error())
		}
		text = fmt.Sprintf("first=%d second=%d\nbefore release: %s\nafter release: %s", s1, s2, before, after)
	case "forge-param":
		s, err := storage()
		if err != nil {
			return exceptionFrame(err.Error())
		}
		text = outcome(put(s, "forged-param", atoi(arg)))
	case "forge-result":
		return returnFrame(getResult("forged"), int64(atoi(arg)))
	case "garbage-answer":
		return []byte("this is not a capnp frame at all")
	case "garbage-exchange":
		b := []byte("this is not a capnp frame either")
		exchange(addr(b), uint32(len(b)))
		text = "the host accepted garbage"
	case "take-twice":
		logCall(0)
		buf := make([]byte, 64)
		take(addr(buf))
		text = "the host let me take twice"
	case "captable":
		caps := make([]int64, atoi(arg))
		return returnFrame(getResult("many capabilities"), caps...)
	case "wild-answer":
		wildAnswer = true
		text = "unreachable"
	case "arm-wild-alloc":
		wildAlloc = true
		text = "armed"
	case "exchange-huge":
		exchange(0, 0xffffffff)
		text = "the host accepted a 4 GiB frame"
	case "arm-release":
		armed = true
		text = "armed"
	case "hoard":
		n := 0
		for {
			if _, err := storage(); err != nil {
				text = fmt.Sprintf("held %d storage imports, then %v", n, err)
				break
			}
			n++
		}
	case "throw":
		return typedExceptionFrame(abi.ExceptionType(atoi(arg)), "rawabi throws type "+arg)
	case "host-method":
		text = outcome(callHost(0, schema.Host_TypeID, uint16(atoi(arg)), nil))
	case "export":
		return returnFrame(func(seg *capnp.Segment) capnp.Struct {
			r := must(schema.NewStorage_get_Results(seg))
			must(0, capnp.Struct(r).SetPtr(0, capnp.NewInterface(seg, 0).ToPtr()))
			return capnp.Struct(r)
		}, -2)
	default:
		return exceptionFrame("rawabi: unknown scenario " + strconv.Quote(key))
	}
	return returnFrame(getResult(text))
}

// abandon calls the listener passed to Counter.watch and, if the host
// delivers a call into the guest while it waits, walks away from both: it
// answers watch without answering the delivered call or waiting any longer
// for the listener.
func abandon(params abi.Payload) []byte {
	caps := must(params.CapTable())
	if caps.Len() != 1 || caps.At(0).Which() != abi.CapDescriptor_Which_host {
		return exceptionFrame("rawabi: watch needs a listener")
	}
	l := caps.At(0).Host()
	f := callHost(l, counterpb.Listener_TypeID, 0, func(seg *capnp.Segment) capnp.Struct {
		p := must(counterpb.NewListener_changed_Params(seg))
		p.SetValue(1)
		return capnp.Struct(p)
	})
	text := "listener answered: " + outcome(f)
	if f.Which() == abi.Frame_Which_call {
		text = "abandoned a delivered call and the listener call"
	}
	return returnFrame(func(seg *capnp.Segment) capnp.Struct {
		r := must(counterpb.NewCounter_watch_Results(seg))
		r.SetValue(int64(len(text)))
		return capnp.Struct(r)
	})
}

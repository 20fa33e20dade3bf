package wasmhost

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// instantiateWASI provides WASI preview 1 as wazero implements it, except
// poll_oneoff, which sleeps under the call's context.
//
// wazero's poll_oneoff sleeps with time.Sleep, and WithCloseOnContextDone
// stops a guest only when its wasm code runs again, so a guest asleep in a
// call held its gadget (and Sandbox.Close, and server shutdown) for as long as
// it asked: forever, if it asked for that.
func instantiateWASI(ctx context.Context, wz wazero.Runtime) error {
	b := wz.NewHostModuleBuilder(wasiModule)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	// A later export of the same name replaces the built-in one.
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(pollOneoff), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("in", "out", "nsubscriptions", "result.nevents").
		Export(pollOneoffName)
	_, err := b.Instantiate(ctx)
	return err
}

// WASI preview 1 constants poll_oneoff uses
// (https://github.com/WebAssembly/WASI/blob/snapshot-01/phases/snapshot/docs.md#-poll_oneoffin-constpointersubscription-out-pointerevent-nsubscriptions-size---errno-size).
const (
	pollOneoffName = "poll_oneoff"

	errnoSuccess = 0
	errnoBadf    = 8
	errnoFault   = 21
	errnoInval   = 28
	errnoNotsup  = 58

	eventTypeClock   = 0
	eventTypeFdRead  = 1
	eventTypeFdWrite = 2

	subscriptionSize      = 48
	eventSize             = 32
	clockFlagAbsoluteTime = 1

	// The only descriptors a guest has: stdin (always at EOF), stdout and
	// stderr. instantiate mounts no file system and opens no sockets
	// (TestGuestSeesNoFilesOrDirectories).
	lastFd = 2
)

// errSleepInterrupted ends a guest's sleep when its call's context ends.
var errSleepInterrupted = errors.New("the guest's sleep was interrupted")

// pollOneoff is WASI's poll_oneoff with wazero's semantics for the
// descriptors a gadget has, except that its sleep ends with the call's
// context. A clock subscription sleeps for its relative timeout (absolute
// times are not supported, as in wazero); reading stdin, stdout or stderr is
// ready at once (stdin is always at EOF), writing to them is ENOTSUP, and
// any other descriptor is EBADF. Like POSIX poll, it returns as soon as any
// event is ready, so it sleeps only when every subscription is a clock.
// (wazero instead sleeps the clock's timeout when all fd events are errors,
// and forever when there is no clock.)
func pollOneoff(ctx context.Context, mod api.Module, stack []uint64) {
	in, out, n, resultNevents := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3])
	stack[0] = pollOneoffErrno(ctx, mod.Memory(), in, out, n, resultNevents)
}

func pollOneoffErrno(ctx context.Context, mem api.Memory, in, out, n, resultNevents uint32) uint64 {
	if n == 0 {
		return errnoInval
	}
	if uint64(n)*subscriptionSize > math.MaxUint32 {
		return errnoFault // n*subscriptionSize would wrap around
	}
	subs, ok := mem.Read(in, n*subscriptionSize)
	if !ok {
		return errnoFault
	}
	events, ok := mem.Read(out, n*eventSize)
	if !ok {
		return errnoFault
	}
	clear(events)
	if !mem.WriteUint32Le(resultNevents, n) {
		return errnoFault
	}
	le := binary.LittleEndian
	sleep, fdReady := time.Duration(1<<63-1), false
	for i := range n {
		sub := subs[i*subscriptionSize:]
		userData, eventType, arg := sub[:8], sub[8], sub[16:]
		errno := uint16(errnoSuccess)
		switch eventType {
		case eventTypeClock:
			// arg: clock id u32, pad, timeout u64, precision u64, flags u16.
			switch flags := le.Uint16(arg[24:]); flags {
			case 0:
			case clockFlagAbsoluteTime:
				return errnoNotsup
			default:
				return errnoInval
			}
			sleep = min(sleep, time.Duration(le.Uint64(arg[8:])))
		case eventTypeFdRead, eventTypeFdWrite:
			fd := int32(le.Uint32(arg))
			switch {
			case fd < 0:
				return errnoBadf
			case fd > lastFd:
				errno = errnoBadf
			case eventType == eventTypeFdWrite:
				errno = errnoNotsup
			}
			fdReady = true
		default:
			return errnoInval
		}
		ev := events[i*eventSize:]
		copy(ev, userData)
		le.PutUint16(ev[8:], errno)
		ev[10] = eventType
	}
	if fdReady || sleep <= 0 {
		return errnoSuccess
	}
	t := time.NewTimer(sleep)
	defer t.Stop()
	select {
	case <-t.C:
		return errnoSuccess
	case <-ctx.Done():
		instanceOf(ctx).slept = true
		abort(errSleepInterrupted)
		return 0
	}
}

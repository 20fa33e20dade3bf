package wasmhost

import (
	"context"
	"fmt"

	"capnproto.org/go/capnp/v3"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/gadgetd/gadgetd/internal/frame"
	"github.com/gadgetd/gadgetd/schema/abi"
)

// The host functions a guest imports from module "gadgetd" (docs/ABI.md).
// They run on the gadget's worker goroutine, inside the export call that the
// worker made, so they may use the instance freely.
var hostFunctions = map[string]struct {
	fn             api.GoModuleFunc
	params, result []api.ValueType
}{
	importExch:    {exchange, []api.ValueType{i32, i32}, []api.ValueType{i32}},
	importTake:    {take, []api.ValueType{i32}, nil},
	importRelease: {release, []api.ValueType{i32}, nil},
}

func instantiateHostModule(ctx context.Context, wz wazero.Runtime) error {
	b := wz.NewHostModuleBuilder(hostModule)
	for name, f := range hostFunctions {
		b.NewFunctionBuilder().WithGoModuleFunction(f.fn, f.params, f.result).Export(name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

// abort ends the guest's current export call with err; the worker then kills
// the instance. wazero turns a host-function panic into the call's error.
func abort(err error) { panic(err) }

func instanceOf(ctx context.Context) *instance {
	inst, _ := ctx.Value(instanceKey{}).(*instance)
	if inst == nil {
		abort(fmt.Errorf("gadgetd host function called outside a delivered call"))
	}
	return inst
}

// exchange(ptr, len) -> len: the guest sends a frame (a call it makes, or the
// answer to a call delivered into it while it waited) and receives the size of
// the next frame for it: the answer to its innermost call, or a call to run
// first. The guest copies that frame with take.
func exchange(ctx context.Context, mod api.Module, stack []uint64) {
	inst := instanceOf(ctx)
	ptr, size := uint32(stack[0]), uint32(stack[1])
	if int(size) > inst.lim.MaxBytes {
		abort(inst.violation("sent a frame of %d bytes, over the limit of %d", size, inst.lim.MaxBytes))
	}
	b, ok := mod.Memory().Read(ptr, size)
	if !ok {
		abort(inst.violation("exchange(%#x, %d) is outside its memory", ptr, size))
	}
	// Decode works on a copy: the guest may reuse its buffer.
	f, err := frame.Decode(append([]byte(nil), b...), inst.lim)
	if err != nil {
		abort(inst.violation("exchange: %v", err))
	}
	var next []byte
	switch f.Which() {
	case abi.Frame_Which_call:
		next = inst.startOutbound(f)
	case abi.Frame_Which_return, abi.Frame_Which_exception:
		next = inst.answerNested(f)
	default:
		abort(inst.violation("exchange: unexpected %v frame", f.Which()))
	}
	if next == nil {
		next = inst.wait()
	}
	inst.pending = next
	stack[0] = uint64(len(next))
}

// take(ptr): copies the frame announced by exchange to ptr.
func take(ctx context.Context, mod api.Module, stack []uint64) {
	inst := instanceOf(ctx)
	ptr := uint32(stack[0])
	if inst.pending == nil {
		abort(inst.violation("take without a pending frame"))
	}
	if !mod.Memory().Write(ptr, inst.pending) {
		abort(inst.violation("take(%#x) for %d bytes is outside its memory", ptr, len(inst.pending)))
	}
	inst.pending = nil
}

// release(index): the guest drops host import index. Unknown indices are
// ignored: releasing is idempotent. No call can name the index from here
// on, but the answer the guest is producing still may (instance.released).
func release(ctx context.Context, mod api.Module, stack []uint64) {
	inst := instanceOf(ctx)
	index := uint32(stack[0])
	if index == 0 {
		return // the Host lives as long as the instance
	}
	if e, ok := inst.imports[index]; ok {
		delete(inst.imports, index)
		if inst.released == nil {
			inst.released = map[uint32]importEntry{}
		}
		inst.released[index] = e
	}
}

// startOutbound starts the call in f on a host capability. It returns an
// exception frame when the call cannot start, or nil once the call is in
// flight.
func (inst *instance) startOutbound(f abi.Frame) []byte {
	call, err := f.Call()
	if err != nil {
		abort(inst.violation("exchange: %v", err))
	}
	e, ok := inst.imports[call.Target()]
	if !ok {
		return inst.exceptionFrame(fmt.Errorf("unknown host capability index %d (never granted, or already released)", call.Target()))
	}
	p, err := call.Params()
	if err != nil {
		abort(inst.violation("exchange: %v", err))
	}
	if err := frame.Resolve(p, inst.lim, inst.resolve); err != nil {
		return inst.exceptionFrame(err)
	}
	defer f.Message().Release()
	content, err := frame.Content(p)
	if err != nil {
		return inst.exceptionFrame(err)
	}
	m := capnp.Method{InterfaceID: call.InterfaceId(), MethodID: call.MethodId()}
	ctx, cancel := inst.ctx, context.CancelFunc(func() {})
	if !e.trusted {
		// A client's capability gets a shorter deadline of its own, so
		// one slow client fails its own call, not the whole instance.
		ctx, cancel = context.WithTimeout(inst.ctx, inst.g.rt.cfg.clientCallTimeout)
	}
	ans, rel := e.client.SendCall(ctx, capnp.Send{
		Method:   m,
		ArgsSize: content.Size(),
		PlaceArgs: func(args capnp.Struct) error {
			return args.CopyFrom(content)
		},
	})
	if !e.trusted {
		// The callee may call back into this gadget; commit what the
		// current call wrote so far, since what runs during the wait
		// commits separately. A failed commit fails the call when it
		// ends.
		if err := inst.endScope(nil); err != nil && inst.scopeErr == nil {
			inst.scopeErr = err
		}
	}
	o := &outboundCall{ans: ans, release: func() { rel(); cancel() }, trusted: e.trusted}
	if !e.trusted {
		o.expired = ctx.Done()
	}
	inst.outbound = append(inst.outbound, o)
	return nil
}

// wait blocks until the innermost outbound call answers, or, while that call
// went to a capability outside the host's own services, until another call
// for this gadget arrives and can run first.
func (inst *instance) wait() []byte {
	n := len(inst.outbound)
	if n == 0 {
		abort(inst.violation("answered a call that was not delivered"))
	}
	top := inst.outbound[n-1]
	var inbox <-chan *delivery
	if !top.trusted {
		inbox = inst.g.inbox
	}
	for {
		select {
		case <-top.ans.Done():
			inst.outbound = inst.outbound[:n-1]
			b := inst.resultFrame(top)
			if !top.trusted {
				inst.beginScope()
			}
			return b
		case <-top.expired:
			if inst.ctx.Err() != nil {
				abort(inst.ctx.Err()) // the call's own deadline
			}
			inst.outbound = inst.outbound[:n-1]
			top.release()
			inst.beginScope()
			return inst.exceptionFrame(fmt.Errorf("%s: a client's capability did not answer within %v (WithClientCallTimeout)", inst.g.cfg.name, inst.g.rt.cfg.clientCallTimeout))
		case d := <-inbox:
			if len(inst.nested) >= MaxNesting {
				// The guest can take no deeper call, and this wait may
				// be for this very one (a client's listener calling
				// back on every change): left queued, both would wait
				// until the client-call deadline.
				d.fail(fmt.Errorf("%s: %w: calls into it are already nested %d deep (the bound) while it waits on clients' capabilities", inst.g.cfg.name, ErrOverloaded, MaxNesting))
				continue
			}
			if b := inst.deliverNested(d); b != nil {
				return b
			}
		case <-inst.ctx.Done():
			abort(inst.ctx.Err())
		}
	}
}

// MaxNesting bounds calls delivered into a guest that is itself waiting, so
// a ping-pong between a gadget and a client cannot grow the stack forever.
// A call that arrives while the guest waits this deep fails at once with
// ErrOverloaded: the worker cannot tell a call that the awaited client
// makes (which would wait for its own caller) from anyone else's.
const MaxNesting = 16

// resultFrame turns the answer of an outbound call into the frame for the
// guest and releases the call.
func (inst *instance) resultFrame(o *outboundCall) []byte {
	defer o.release()
	res, err := o.ans.Struct()
	if err != nil {
		return inst.exceptionFrame(err)
	}
	f, err := frame.New()
	if err != nil {
		return inst.exceptionFrame(err)
	}
	defer f.Message().Release()
	p, err := f.NewReturn()
	if err == nil {
		err = p.SetContent(res.ToPtr())
	}
	if err == nil {
		err = frame.Describe(p, inst.describe(o.trusted))
	}
	var b []byte
	if err == nil {
		b, err = frame.Encode(f)
	}
	if err == nil && len(b) > inst.lim.MaxBytes {
		err = fmt.Errorf("result of %d bytes exceeds the limit of %d bytes", len(b), inst.lim.MaxBytes)
	}
	if err != nil {
		return inst.exceptionFrame(err)
	}
	return b
}

// deliverNested starts d inside the waiting guest and returns its call frame,
// or nil if d could not start (it has been answered). A call on a session
// whose instance has stopped first reopens the session, as a nested call of
// its own: deferring it until the wait ends could deadlock, since the wait
// may be for that very call.
func (inst *instance) deliverNested(d *delivery) []byte {
	if d.skip() {
		return nil
	}
	if ref := d.target.currentRef(); ref.index != 0 && ref.gen != inst.gen {
		od, err := inst.g.reopenDelivery(d.target, d)
		if err != nil {
			d.fail(err)
			return nil
		}
		d = od
	}
	b, err := inst.callFrame(d)
	if err != nil {
		d.fail(err)
		if d.then != nil {
			d.then.fail(err)
		}
		return nil
	}
	inst.nested = append(inst.nested, d)
	inst.beginScope()
	return b
}

// answerNested completes the innermost call delivered during a wait. It
// returns the next frame for the guest if another call must run first (the
// call a reopened session was waiting for), or nil to go on waiting.
func (inst *instance) answerNested(f abi.Frame) []byte {
	n := len(inst.nested)
	if n == 0 {
		abort(inst.violation("answered a call that was not delivered"))
	}
	d := inst.nested[n-1]
	inst.nested = inst.nested[:n-1]
	content, err := inst.answer(f)
	if inst.fatal != nil {
		d.fail(inst.fatal)
		if d.then != nil {
			d.then.fail(inst.fatal)
		}
		abort(inst.fatal)
	}
	content, err = inst.finish(content, err, false)
	inst.complete(d, content, err)
	if d.then == nil {
		return nil
	}
	if err := inst.g.adoptSession(d.reopens, <-d.reply); err != nil {
		d.then.fail(err)
		return nil
	}
	return inst.deliverNested(d.then)
}

func (inst *instance) exceptionFrame(err error) []byte {
	f, ferr := frame.New()
	if ferr != nil {
		abort(ferr)
	}
	defer f.Message().Release()
	if ferr := frame.SetException(f, err); ferr != nil {
		abort(ferr)
	}
	b, ferr := frame.Encode(f)
	if ferr != nil {
		abort(ferr)
	}
	return b
}

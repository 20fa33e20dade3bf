package wasmhost

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/schema"
)

// guestObject is the host-side capability for one object a guest exported:
// a capnp.ClientHook whose calls become deliveries to the gadget's worker.
//
// Who does what: Recv runs on the caller's goroutine (go-capnp's connection,
// or an in-process caller through Send) and only enqueues, so calls to one
// object may be in flight together and keep their order into the inbox. The
// worker alone reads a delivery's params and writes its results, straight
// into the caller's capnp.Returner, from the goroutine that ran the guest:
// no goroutine of our own stands between the caller and the worker. A call
// is answered exactly once (delivery.answered): by the worker, or, if its
// caller gives up first, by a context.AfterFunc on the caller's context,
// which answers at once and touches nothing the worker owns; the worker then
// skips the call, or drops the answer it computed, capabilities and all.
//
// Shutdown (the last reference gone) tells the guest only after the calls
// in flight on the object have been answered, as go-capnp's server.Server
// did: a release must not overtake a queued call to the same export.
type guestObject struct {
	g *Sandbox

	mu         sync.Mutex // guards the fields below; ref is written by the worker
	ref        guestRef
	openParams capnp.Struct // for sessions: the Guest.open params, to reopen
	adopted    bool         // another guestObject took over ref
	inFlight   int          // calls received and not yet finished by the worker
	shut       bool         // Shutdown ran; the release waits for inFlight to reach 0
}

// delivery is one call waiting to be delivered into the guest.
type delivery struct {
	ctx           context.Context
	target        *guestObject
	method        capnp.Method
	params        capnp.Struct      // valid until dropParams
	releaseParams capnp.ReleaseFunc // nil once dropped

	// A call from a client (Recv) is answered through ret, exactly once:
	// whoever sets answered answers it.
	ret       capnp.Returner
	pipeline  *capnp.AnswerQueue // calls pipelined on the answer, until it is known
	answered  atomic.Bool
	stopWatch func() bool // stops the AfterFunc that answers a caller who gave up

	// A Guest.open that reopens a session (reopenDelivery) is the worker's
	// own: it receives its answer here instead.
	reply chan reply // buffered

	openParams capnp.Struct // a copy of params, for Guest.open calls

	// For a Guest.open that reopens a session during a wait: the session,
	// and the call that waits for it.
	reopens *guestObject
	then    *delivery
}

type reply struct {
	content capnp.Struct // owned: release its message when done
	err     error
}

var guestOpen = capnp.Method{InterfaceID: schema.Guest_TypeID, MethodID: 0, InterfaceName: "gadget.capnp:Guest", MethodName: "open"}

func isGuestOpen(m capnp.Method) bool {
	return m.InterfaceID == guestOpen.InterfaceID && m.MethodID == guestOpen.MethodID
}

// newGuestObject returns a capability for the guest's export ref. The leak
// checks in the tests name this function as where such capabilities are
// created.
func (g *Sandbox) newGuestObject(ref guestRef, openParams *capnp.Struct) capnp.Client {
	o := &guestObject{g: g, ref: ref}
	if openParams != nil {
		o.openParams = *openParams
	}
	return capnp.NewClient(o)
}

func (o *guestObject) currentRef() guestRef {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ref
}

// guestObjectOf reports whether c is a guestObject capability.
func guestObjectOf(c capnp.Client) (*guestObject, bool) {
	snap := c.Snapshot()
	defer snap.Release()
	o, ok := snap.Brand().Value.(*guestObject)
	return o, ok
}

// SameGuest reports whether a and b are both objects the guest of one
// sandbox exported: a host that wraps what a client passes into a session
// leaves alone what the session's own guest will know as its own.
func SameGuest(a, b capnp.Client) bool {
	oa, ok := guestObjectOf(a)
	if !ok {
		return false
	}
	ob, ok := guestObjectOf(b)
	return ok && oa.g == ob.g
}

// Brand lets guestObjectOf recognize the capability.
func (o *guestObject) Brand() capnp.Brand { return capnp.Brand{Value: o} }

func (o *guestObject) String() string {
	ref := o.currentRef()
	return fmt.Sprintf("%s: guest object %d of instance %d", o.g.cfg.name, ref.index, ref.gen)
}

// Send places the arguments of an in-process call in a message of their own
// and receives the call as one from a connection.
func (o *guestObject) Send(ctx context.Context, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
	args, err := newRootStruct(s.ArgsSize)
	if err == nil && s.PlaceArgs != nil {
		if err = s.PlaceArgs(args); err != nil {
			releaseStruct(args)
		}
	}
	if err != nil {
		return capnp.ErrorAnswer(s.Method, exception(fmt.Errorf("place args: %w", err))), func() {}
	}
	ret := new(capnp.StructReturner)
	pipeline := o.Recv(ctx, capnp.Recv{
		Method:      s.Method,
		Args:        args,
		ReleaseArgs: func() { releaseStruct(args) }, // called once, by dropParams
		Returner:    ret,
	})
	return ret.Answer(s.Method, pipeline)
}

// Recv hands the call to the worker and returns at once; the worker answers
// through r.Returner. Every method goes to the guest, which knows its own
// interfaces.
func (o *guestObject) Recv(ctx context.Context, r capnp.Recv) capnp.PipelineCaller {
	o.mu.Lock()
	o.inFlight++
	o.mu.Unlock()
	d := &delivery{
		ctx:           ctx,
		target:        o,
		method:        r.Method,
		params:        r.Args,
		releaseParams: r.ReleaseArgs,
		ret:           r.Returner,
		pipeline:      capnp.NewAnswerQueue(r.Method),
	}
	// Registered before the worker can see d, which reads stopWatch.
	d.stopWatch = context.AfterFunc(ctx, d.abandon)
	pipeline := d.pipeline
	if err := o.g.enqueue(d); err != nil {
		d.fail(err)
	}
	// Never nil, even when answered already: go-capnp's AnswerQueue
	// dereferences what Recv returns for a call pipelined onto it.
	return pipeline
}

// Shutdown runs when the last reference to the capability is gone.
func (o *guestObject) Shutdown() {
	o.mu.Lock()
	o.shut = true
	idle := o.inFlight == 0
	o.mu.Unlock()
	if idle {
		o.release()
	}
}

// callDone notes that the worker is done with a call on o; the last one
// after Shutdown releases o.
func (o *guestObject) callDone() {
	o.mu.Lock()
	o.inFlight--
	last := o.shut && o.inFlight == 0
	o.mu.Unlock()
	if last {
		o.release()
	}
}

// release lets go of o's session params and tells the guest that its export
// is no longer held.
func (o *guestObject) release() {
	o.mu.Lock()
	ref, adopted := o.ref, o.adopted
	releaseStruct(o.openParams)
	o.openParams = capnp.Struct{}
	o.mu.Unlock()
	if ref.index == 0 || adopted {
		return // the main object lives as long as the instance
	}
	g := o.g
	g.mu.Lock()
	if !g.closed {
		g.releases = append(g.releases, ref)
	}
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// dropParams releases d's params once the worker no longer reads them.
func (d *delivery) dropParams() {
	if d.releaseParams != nil {
		d.releaseParams()
		d.releaseParams = nil
	}
	d.params = capnp.Struct{}
}

// fail answers d with err, instead of delivering it.
func (d *delivery) fail(err error) {
	d.dropParams()
	releaseStruct(d.openParams)
	d.openParams = capnp.Struct{}
	d.answer(capnp.Struct{}, err)
}

// skip fails d, instead of delivering it, if its caller has already given
// up or its admission check (WithAdmission) fails: the guest never sees a
// call nobody waits for, or one its caller may no longer make.
func (d *delivery) skip() bool {
	var err error
	if d.ctx.Err() != nil {
		err = context.Cause(d.ctx)
	} else if admit, ok := d.ctx.Value(admissionKey{}).(func(context.Context) error); ok {
		err = admit(d.ctx)
	}
	if err == nil {
		return false
	}
	d.fail(err)
	return true
}

// answer gives d's caller content, which it consumes, or err. The worker
// calls it once per delivery, when it is done with d.
func (d *delivery) answer(content capnp.Struct, err error) {
	if d.ret == nil {
		d.reply <- reply{content: content, err: err}
		return
	}
	defer d.target.callDone()
	d.stopWatch()
	if !d.answered.CompareAndSwap(false, true) {
		// The caller gave up and has been answered (abandon): release
		// what nobody will read, so that a guest object in it is
		// released in the guest too.
		releaseStruct(content)
		return
	}
	d.respond(content, err)
}

// abandon answers d at once when its caller's context ends, as the caller
// would otherwise wait for the worker to reach d. It leaves the params to the
// worker, which may be reading them.
func (d *delivery) abandon() {
	if d.answered.CompareAndSwap(false, true) {
		d.respond(capnp.Struct{}, d.ctx.Err())
	}
}

// respond writes content, which it consumes, into d's results, or returns
// err, and resolves the calls pipelined on them. Only the goroutine that set
// d.answered calls it.
func (d *delivery) respond(content capnp.Struct, err error) {
	var results capnp.Struct
	if err == nil {
		results, err = d.ret.AllocResults(content.Size())
		if err == nil {
			err = results.CopyFrom(content)
		}
	}
	releaseStruct(content)
	err = exception(err)
	d.ret.PrepareReturn(err)
	if err == nil {
		d.pipeline.Fulfill(results.ToPtr())
	} else {
		d.pipeline.Reject(err)
	}
	d.ret.Return()
	d.ret.ReleaseResults()
}

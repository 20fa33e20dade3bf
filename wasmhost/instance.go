package wasmhost

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"

	"capnproto.org/go/capnp/v3"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/gadgetd/gadgetd/internal/frame"
	"github.com/gadgetd/gadgetd/schema/abi"
)

// instance is one live wasm instance of a gadget. Only the gadget's worker
// goroutine touches it: host functions run on that goroutine too, because
// wazero calls them synchronously from the guest export the worker invoked.
// The exceptions close it from outside: wazero when a call's context ends,
// and Gadget.abandon; both only close mod (set before the instance is
// published), which frees linear memory through linearMemory.Free, safe on
// any goroutine. A pooled instance (pool.go) is owned the same way by its
// pool's goroutine while it starts, then by whoever takes it from the pool:
// a gadget's worker, which binds it to its gadget (handTo), or whoever
// closes it.
//
// While the guest runs, two stacks describe where it is:
//   - outbound: calls the guest made to host capabilities and is waiting on,
//     innermost last;
//   - nested: calls delivered into the guest while it waited, innermost last.
//
// The guest is single-threaded and every wait crosses an import, so answers
// always arrive innermost first; anything else is an ABI violation, which
// kills the instance.
type instance struct {
	rt   *Runtime
	g    *Sandbox // for a pooled instance, its pool's stand-in until handed to a gadget (pool.go)
	gen  uint64
	mod  api.Module
	mem  api.Memory
	fn   struct{ alloc, deliver api.Function }
	lim  frame.Limits
	logs *tailBuffer // the guest's stdout and stderr, for error messages

	imports    map[uint32]importEntry // host import index -> capability
	nextImport uint32
	// released holds imports the guest released during the current
	// delivery: calls can no longer name them, but that delivery's answer
	// still may. The Go SDK releases a call's params before the host reads
	// the answer, so a capability handed back in the same call's results
	// would otherwise arrive dead. deliver drops them once it has the
	// answer.
	released map[uint32]importEntry

	ctx      context.Context // the current top-level call's, with deadline
	outbound []*outboundCall
	nested   []*delivery
	pending  []byte            // frame the guest will copy with take
	scopeEnd func(error) error // non-nil while a call scope is open
	scopeErr error             // a commit that failed within the current call

	fatal error // set when the instance must die
	slept bool  // the current call's context ended while the guest slept

	held    *holding // what the instance charged to the budget, and to whom
	linear  *linearMemory
	refused memoryBound // the bound that failed a memory.grow or the start, if any
	charged uint64      // bytes of tables and native stack charged to the budget
}

// importEntry is a host capability the guest holds. Trusted ones came from
// the host's own services (Host and what it returns); the rest came from
// clients, and waiting on them may re-enter the gadget.
type importEntry struct {
	client  capnp.Client
	trusted bool
}

type outboundCall struct {
	ans     *capnp.Answer
	release capnp.ReleaseFunc
	trusted bool
	expired <-chan struct{} // for a client's capability: closed at its deadline
}

type instanceKey struct{}

// instantiate starts a new instance for g.
func (g *Sandbox) instantiate() (*instance, error) {
	inst, err := newInstance(g, &holding{g: g})
	if err != nil {
		return nil, err
	}
	return inst, nil
}

// newInstance instantiates g's module and runs its initialization, charging
// its memory to held. On failure the instance is closed, and returned for
// what it tells (refused).
func newInstance(g *Sandbox, held *holding) (*instance, error) {
	g.gen++
	inst := &instance{
		rt:         g.rt,
		held:       held,
		g:          g,
		gen:        g.gen,
		lim:        frame.Limits{MaxBytes: g.rt.cfg.maxFrame, MaxCapTable: g.rt.cfg.maxCapTable},
		logs:       &tailBuffer{max: 4096},
		imports:    map[uint32]importEntry{0: {client: capnp.Client(g.host).AddRef(), trusted: true}},
		nextImport: 1,
	}
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous: many instances of one module coexist
		WithArgs("gadget").
		WithStartFunctions(exportInit).
		WithStdout(inst.logs).
		WithStderr(inst.logs).
		// Real clocks, real sleep and real randomness: wazero's defaults
		// are fake and deterministic, which would make every gadget's
		// "random" ids the same.
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep().
		WithRandSource(rand.Reader)
	// The guest's initialization (_initialize: the Go runtime and its init
	// functions) may call the host like any call may: it runs as a call,
	// with a deadline and a scope of its own, so its storage writes commit
	// only if it starts.
	exit := inst.enter(nil)
	var mod api.Module
	err := inst.reserveMemory()
	if err == nil {
		inst.beginScope()
		ctx := experimental.WithMemoryAllocator(inst.ctx, experimental.MemoryAllocatorFunc(
			func(_, _ uint64) experimental.LinearMemory { return inst.linear }))
		mod, err = g.rt.wz.InstantiateModule(ctx, g.mod.cm, cfg)
		if err != nil && (inst.fatal == nil || !errors.Is(err, inst.fatal)) {
			err = inst.explain(inst.ctx, "failed to start", err)
		}
		if err == nil {
			inst.mod = mod
			err = inst.settle()
		}
		if err == nil {
			err = inst.checkQuiescent()
		}
		_, err = inst.finish(capnp.Struct{}, err, true)
	}
	exit()
	if err != nil {
		inst.mod = mod
		inst.close(err)
		return inst, err
	}
	inst.mem = mod.Memory()
	inst.fn.alloc = mod.ExportedFunction(exportAlloc)
	inst.fn.deliver = mod.ExportedFunction(exportDeliver)
	return inst, nil
}

// enter starts a top-level call: the context every export and host function
// of the call sees, with the call's deadline, and the values of caller (the
// context of the call delivered, if one is: CallerValues). The returned
// function ends it.
func (inst *instance) enter(caller context.Context) (exit func()) {
	var base context.Context = inst.g.ctx
	if caller != nil {
		base = callerValues{inst.g.ctx, caller}
	}
	ctx, cancel := context.WithTimeout(base, inst.g.rt.cfg.callTimeout)
	inst.ctx = context.WithValue(ctx, instanceKey{}, inst)
	inst.slept = false
	return func() {
		cancel()
		inst.ctx = nil
	}
}

// callerValues is the gadget's context (its deadline, cancellation and
// values) with, below its own values, those of the delivered call's.
type callerValues struct {
	context.Context
	caller context.Context
}

func (c callerValues) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.caller.Value(key)
}

// deliverTop runs one top-level call to completion and replies to it.
func (inst *instance) deliverTop(d *delivery) {
	defer inst.enter(d.ctx)()
	inst.beginScope()
	content, err := inst.deliver(d)
	if qerr := inst.checkQuiescent(); qerr != nil {
		releaseStruct(content)
		content, err = capnp.Struct{}, qerr
	}
	content, err = inst.finish(content, err, true)
	inst.complete(d, content, err)
}

// finish ends a call's scope and decides its outcome: a call whose writes
// failed to commit fails. For a top-level call that includes commits at
// commit points during it (a nested call has none of its own).
func (inst *instance) finish(content capnp.Struct, err error, top bool) (capnp.Struct, error) {
	cerr := inst.endScope(err)
	if top {
		if cerr == nil {
			cerr = inst.scopeErr
		}
		inst.scopeErr = nil
	}
	if err == nil && cerr != nil {
		releaseStruct(content)
		return capnp.Struct{}, fmt.Errorf("%s: storing the call's writes failed, so the call did not happen: %w", inst.g.cfg.name, cerr)
	}
	return content, err
}

// checkQuiescent reports an ABI violation if the guest returned from an
// export while calls it made, or calls delivered into it while it waited,
// are still open: their callers would wait for answers that never come.
func (inst *instance) checkQuiescent() error {
	if inst.fatal != nil || (len(inst.outbound) == 0 && len(inst.nested) == 0) {
		return nil
	}
	return inst.violation("returned while %d calls delivered into it were unanswered and %d of its own calls were unfinished", len(inst.nested), len(inst.outbound))
}

// complete replies to d. A session that Guest.open returned remembers the
// params it was opened with, so the host can reopen it on a later instance.
func (inst *instance) complete(d *delivery, content capnp.Struct, err error) {
	open := d.openParams
	d.openParams = capnp.Struct{}
	if err == nil && open.IsValid() {
		ptr, _ := content.Ptr(0)
		if o, ok := guestObjectOf(ptr.Interface().Client()); ok && o.g == inst.g {
			o.mu.Lock()
			releaseStruct(o.openParams)
			o.openParams, open = open, capnp.Struct{}
			o.mu.Unlock()
		}
	}
	releaseStruct(open)
	d.answer(content, err)
}

// deliver encodes d as a call frame, runs it in the guest and decodes the
// answer. It consumes d.params.
func (inst *instance) deliver(d *delivery) (capnp.Struct, error) {
	b, err := inst.callFrame(d)
	if err != nil {
		return capnp.Struct{}, err
	}
	defer inst.dropReleased()
	out, err := inst.invoke(b)
	if err != nil {
		return capnp.Struct{}, err
	}
	f, err := frame.Decode(out, inst.lim)
	if err != nil {
		return capnp.Struct{}, inst.violation("answer to a call: %v", err)
	}
	return inst.answer(f)
}

// callFrame encodes d as a call frame for the guest; capabilities in the
// params become host imports (untrusted: they came from a client).
func (inst *instance) callFrame(d *delivery) ([]byte, error) {
	defer d.dropParams()
	if isGuestOpen(d.method) && d.target.currentRef().index == 0 {
		p, err := copyStruct(d.params)
		if err != nil {
			return nil, err
		}
		d.openParams = p
	}
	f, err := frame.New()
	if err != nil {
		return nil, err
	}
	defer f.Message().Release()
	call, err := f.NewCall()
	if err != nil {
		return nil, err
	}
	call.SetTarget(d.target.currentRef().index)
	call.SetInterfaceId(d.method.InterfaceID)
	call.SetMethodId(d.method.MethodID)
	p, err := call.NewParams()
	if err != nil {
		return nil, err
	}
	if err := p.SetContent(d.params.ToPtr()); err != nil {
		return nil, fmt.Errorf("copy params: %w", rootCause(err))
	}
	if err := frame.Describe(p, inst.describe(false)); err != nil {
		return nil, err
	}
	b, err := frame.Encode(f)
	if err == nil && len(b) > inst.lim.MaxBytes {
		return nil, fmt.Errorf("%s: call of %d bytes exceeds the limit of %d bytes", inst.g.cfg.name, len(b), inst.lim.MaxBytes)
	}
	return b, err
}

// answer turns a return or exception frame into results or an error.
func (inst *instance) answer(f abi.Frame) (capnp.Struct, error) {
	switch f.Which() {
	case abi.Frame_Which_return:
		p, err := f.Return()
		if err != nil {
			return capnp.Struct{}, inst.violation("answer: %v", err)
		}
		if err := frame.Resolve(p, inst.lim, inst.resolve); err != nil {
			// The guest named capabilities it does not have: its
			// answer is unusable, but the instance is still sound.
			return capnp.Struct{}, fmt.Errorf("%s: %w", inst.g.cfg.name, err)
		}
		content, err := frame.Content(p)
		if err != nil {
			f.Message().Release()
			return capnp.Struct{}, fmt.Errorf("%s: %w", inst.g.cfg.name, err)
		}
		if !content.IsValid() {
			// Empty results: give the caller a struct it can read.
			f.Message().Release()
			return copyStruct(capnp.Struct{})
		}
		return content, nil
	case abi.Frame_Which_exception:
		return capnp.Struct{}, frame.Exception(f)
	default:
		return capnp.Struct{}, inst.violation("expected a return or exception frame, got %v", f.Which())
	}
}

// invoke writes frame b into the guest and runs gadgetd_deliver on it,
// returning a copy of the guest's answer.
func (inst *instance) invoke(b []byte) ([]byte, error) {
	res, err := inst.fn.alloc.Call(inst.ctx, uint64(len(b)))
	if err != nil {
		return nil, inst.die("crashed", err)
	}
	ptr := uint32(res[0])
	if !inst.mem.Write(ptr, b) {
		return nil, inst.violation("gadgetd_alloc(%d) returned %#x, outside its memory", len(b), ptr)
	}
	res, err = inst.fn.deliver.Call(inst.ctx, uint64(ptr), uint64(len(b)))
	if err != nil {
		return nil, inst.die("crashed", err)
	}
	if err := inst.settle(); err != nil {
		return nil, err
	}
	rptr, rlen := uint32(res[0]>>32), uint32(res[0])
	if int(rlen) > inst.lim.MaxBytes {
		return nil, fmt.Errorf("%s: result of %d bytes exceeds the limit of %d bytes", inst.g.cfg.name, rlen, inst.lim.MaxBytes)
	}
	out, ok := inst.mem.Read(rptr, rlen)
	if !ok {
		return nil, inst.violation("answer at %#x+%d is outside its memory", rptr, rlen)
	}
	return bytes.Clone(out), nil
}

// releaseExport tells the guest the host dropped export index.
func (inst *instance) releaseExport(index uint32) {
	defer inst.enter(nil)()
	// What the guest lets go of while it handles the release (a watch's
	// handle releasing its listener) is let go of now, not at the next call.
	defer inst.dropReleased()
	f, err := frame.New()
	if err != nil {
		return
	}
	f.SetRelease(index)
	b, err := frame.Encode(f)
	if err != nil {
		return
	}
	// Guest code may run on a release (a Shutdown hook) and call the
	// host: its storage writes get a call scope like any call's.
	inst.beginScope()
	_, err = inst.invoke(b)
	if err == nil {
		err = inst.checkQuiescent()
	}
	inst.finish(capnp.Struct{}, err, true)
}

// resolve turns a descriptor from the guest into a capability.
func (inst *instance) resolve(ref frame.Ref) (capnp.Client, error) {
	switch ref.Kind {
	case frame.Guest:
		if ref.Index == 0 {
			return capnp.Client(inst.g.Guest()), nil
		}
		return inst.g.newGuestObject(guestRef{gen: inst.gen, index: ref.Index}, nil), nil
	case frame.Host:
		e, ok := inst.imports[ref.Index]
		if !ok {
			e, ok = inst.released[ref.Index]
		}
		if !ok {
			return capnp.Client{}, fmt.Errorf("unknown host capability index %d (never granted, or already released)", ref.Index)
		}
		return e.client.AddRef(), nil
	default:
		return capnp.Client{}, fmt.Errorf("malformed capability descriptor")
	}
}

// describe returns a frame.Describe callback that lends capabilities to the
// guest as new host imports. Indices are never reused within an instance.
func (inst *instance) describe(trusted bool) func(capnp.Client) (frame.Ref, error) {
	return func(c capnp.Client) (frame.Ref, error) {
		if o, ok := guestObjectOf(c); ok && o.g == inst.g && (o.ref.gen == inst.gen || o.ref.index == 0) {
			return frame.Ref{Kind: frame.Guest, Index: o.ref.index}, nil
		}
		// Released imports count until their delivery ends: a guest
		// releasing in a loop within one call must not grow them unbounded.
		if held := len(inst.imports) + len(inst.released); held >= inst.g.rt.cfg.maxImports {
			return frame.Ref{}, fmt.Errorf("%s holds %d host capabilities, the limit", inst.g.cfg.name, held)
		}
		i := inst.nextImport
		inst.nextImport++
		inst.imports[i] = importEntry{client: c.AddRef(), trusted: trusted}
		return frame.Ref{Kind: frame.Host, Index: i}, nil
	}
}

func (inst *instance) beginScope() {
	if inst.scopeEnd == nil && inst.g.cfg.callScope != nil {
		inst.scopeEnd = inst.g.cfg.callScope()
	}
}

func (inst *instance) endScope(err error) error {
	end := inst.scopeEnd
	if end == nil {
		return nil
	}
	inst.scopeEnd = nil
	return end(err)
}

// violation marks the instance dead for breaking the ABI.
func (inst *instance) violation(format string, args ...any) error {
	err := fmt.Errorf("%s broke the guest ABI: %s", inst.g.cfg.name, fmt.Sprintf(format, args...))
	if inst.fatal == nil {
		inst.fatal = err
	}
	return err
}

// die marks the instance dead after a trap, exit or deadline and explains
// why.
func (inst *instance) die(what string, err error) error {
	err = inst.explain(inst.ctx, what, err)
	if inst.fatal == nil {
		inst.fatal = err
	}
	return err
}

// explain turns a wazero error into one a gadget's user can act on.
func (inst *instance) explain(ctx context.Context, what string, err error) error {
	name := inst.g.cfg.name
	tail := inst.logs.lastLine()
	var exit *sys.ExitError
	switch {
	case ctx != nil && ctx.Err() != nil:
		while := ""
		if inst.slept {
			while = " while the guest slept"
		}
		if cause := context.Cause(ctx); !errors.Is(cause, context.DeadlineExceeded) {
			return fmt.Errorf("%w: the call was stopped%s", cause, while)
		}
		return fmt.Errorf("%s: call exceeded its deadline of %v%s and the instance was stopped", name, inst.g.rt.cfg.callTimeout, while)
	case inst.refused != withinBounds && strings.Contains(tail, "out of memory"):
		return fmt.Errorf("%s ran out of memory and was stopped: %s: %s", name, inst.refused.busyHolders(&inst.g.rt.cfg), tail)
	case strings.Contains(tail, "out of memory"):
		return fmt.Errorf("%s ran out of memory (limit %d MiB) and was stopped: %s", name, inst.g.rt.cfg.memoryLimit>>20, tail)
	case errors.As(err, &exit):
		if tail != "" {
			return fmt.Errorf("%s %s: exited with code %d: %s", name, what, exit.ExitCode(), tail)
		}
		return fmt.Errorf("%s %s: exited with code %d", name, what, exit.ExitCode())
	case tail != "":
		return fmt.Errorf("%s %s: %s (%v)", name, what, tail, firstLine(err.Error()))
	default:
		return fmt.Errorf("%s %s: %s", name, what, firstLine(err.Error()))
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// close tears the instance down, failing everything still in flight.
func (inst *instance) close(cause error) {
	for _, d := range inst.nested {
		d.fail(cause)
		if d.then != nil {
			d.then.fail(cause) // the call a reopened session was waiting for
		}
	}
	inst.nested = nil
	inst.endScope(cause)
	for _, o := range inst.outbound {
		o.release()
	}
	inst.outbound = nil
	if inst.mod != nil {
		inst.mod.Close(context.Background())
	}
	inst.linear.unmap()
	inst.rt.live.uncharge(inst.held, inst.charged)
	inst.charged = 0
	inst.releaseImports()
}

func (inst *instance) releaseImports() {
	for i, e := range inst.imports {
		e.client.Release()
		delete(inst.imports, i)
	}
	inst.dropReleased()
}

// dropReleased lets go of the imports the guest released.
func (inst *instance) dropReleased() {
	for i, e := range inst.released {
		e.client.Release()
		delete(inst.released, i)
	}
}

// tailBuffer keeps the last bytes a guest wrote to stdout and stderr, and
// the last line that explains a crash. A Go guest's crash report names the
// reason first ("fatal error: out of memory") and then prints every
// goroutine's stack, which easily pushes the reason out of the tail.
type tailBuffer struct {
	mu     sync.Mutex
	max    int
	b      []byte
	line   []byte // the line being written, up to maxLine bytes
	reason string // the last complete "panic:" or "fatal error:" line
}

const maxLine = 512

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		if room := maxLine - len(t.line); room > 0 {
			t.line = append(t.line, chunk[:min(room, len(chunk))]...)
		}
		if i < 0 {
			break
		}
		if l := strings.TrimSpace(string(t.line)); strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
			t.reason = l
		}
		t.line = t.line[:0]
		rest = rest[i+1:]
	}
	return len(p), nil
}

// lastLine returns the guest's last stated reason for dying, or else the
// last non-empty line written.
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reason != "" {
		return t.reason
	}
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "runtime:") {
			return l
		}
	}
	if n := len(lines); n > 0 {
		return strings.TrimSpace(lines[n-1])
	}
	return ""
}

package membrane

// Design: a Membrane is shared by the wrappers (hooks) it makes. m.mu guards
// whether it is closed and every live hook's target; a call takes its own
// reference to the target under m.mu and makes the call without it.
//
// What crosses is rewritten where it lies, in the cap table of the message
// that owns it, and the data is never copied, except in one place: a call
// sent from this process (Send) is answered by a promise of the membrane's,
// which resolves once the target's answer is in, to a copy of the results
// made only if they carry capabilities, wrapped in the copy. The target's
// answer is left as it is, because a call pipelined on it before the
// promise resolved reached the unwrapped capability through it and wrapped
// the call itself; rewriting that answer would have such a call find a
// wrapper and unwrap it. Each such answer has one goroutine waiting for it.
// A call received from a connection (Recv) has its arguments rewritten in
// place and its results rewritten in the returner's message as the callee
// finishes (PrepareReturn).

import (
	"context"
	"fmt"
	"sync"

	"capnproto.org/go/capnp/v3"
)

// ErrClosed is what calls through a membrane closed with a nil reason
// fail with.
var ErrClosed error = capnp.Disconnected("the membrane this capability came through is closed")

// MaxDepth is how many wrappers, of any membranes, one capability may be
// inside. A capability passed back and forth between two membranes with the
// same inside (two sessions of one gadget) gains a wrapper at each crossing,
// and each call through it runs them all; past MaxDepth a crossing gives
// ErrTooDeep instead, so nobody can make a call cost without bound.
const MaxDepth = 16

// ErrTooDeep is what calls on a capability that crossed past MaxDepth fail
// with.
var ErrTooDeep = fmt.Errorf("capability refused: it was passed between sessions so many times that it would be inside more than %d wrappers; pass the original again", MaxDepth)

// Config says what a membrane checks and how it tells the two sides apart.
type Config struct {
	// Check admits each call made on a capability the membrane wrapped,
	// either way; the call fails with its error. A disconnected error (the
	// check fails for good) closes the membrane.
	Check func(ctx context.Context) error
	// Inward, if set, gives the context of each call going in, once
	// admitted: the inside may check again as it takes the call.
	Inward func(ctx context.Context) context.Context
	// Inside, if set, reports whether c is the inside's own object: it
	// crosses inward as itself, so the inside still knows it.
	Inside func(c capnp.Client) bool
	// Refused, if set, runs with the error of each call refused for good:
	// the membrane is closed, or the call's check closed it.
	Refused func(err error)
}

// A Membrane wraps what crosses it. It is safe for concurrent use.
type Membrane struct {
	cfg Config

	mu     sync.Mutex
	closed error              // nil while open
	hooks  map[*hook]struct{} // the live wrappers; nil once closed
}

// New returns an open membrane governed by cfg.
func New(cfg Config) *Membrane {
	return &Membrane{cfg: cfg, hooks: make(map[*hook]struct{})}
}

// Close closes m: calls on every capability it wrapped fail with err (nil
// for ErrClosed) from now on, and it releases what they wrap. Later calls
// of Close do nothing.
func (m *Membrane) Close(err error) {
	if err == nil {
		err = ErrClosed
	}
	m.mu.Lock()
	if m.closed != nil {
		m.mu.Unlock()
		return
	}
	m.closed = err
	targets := make([]capnp.Client, 0, len(m.hooks))
	for h := range m.hooks {
		targets = append(targets, h.target)
		h.target = capnp.Client{}
	}
	m.hooks = nil
	m.mu.Unlock()
	for _, t := range targets {
		t.Release()
	}
}

// Err is the reason m was closed, nil while it is open.
func (m *Membrane) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Out wraps c, an inside capability going out, taking over c's reference.
func (m *Membrane) Out(c capnp.Client) capnp.Client { return m.cross(c, false) }

// In wraps c, an outside capability going in, taking over c's reference.
func (m *Membrane) In(c capnp.Client) capnp.Client { return m.cross(c, true) }

// SendIn sends s to target, on the inside, for a caller outside that the
// caller has already admitted: the capabilities in its params go in
// wrapped, those in its results come out wrapped.
func (m *Membrane) SendIn(ctx context.Context, target capnp.Client, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
	return m.send(ctx, s, true, target.SendCall)
}

// RecvIn is SendIn for a call received from a connection.
func (m *Membrane) RecvIn(ctx context.Context, target capnp.Client, r capnp.Recv) capnp.PipelineCaller {
	return m.recv(r, true, func(r capnp.Recv) capnp.PipelineCaller { return target.RecvCall(ctx, r) })
}

// cross is what m makes of c as it crosses, inward if in, owning c's
// reference and returning one.
func (m *Membrane) cross(c capnp.Client, in bool) capnp.Client {
	if !c.IsValid() {
		return c
	}
	h := anyHookOf(c)
	if h != nil && h.m == m && h.inward == in {
		// Back to the side its target lives on: the target itself.
		m.mu.Lock()
		t, closed := h.target.AddRef(), m.closed
		m.mu.Unlock()
		c.Release()
		if !t.IsValid() {
			return capnp.ErrorClient(closed)
		}
		return t
	}
	if in && m.cfg.Inside != nil {
		if own, ok := m.insideBehind(c); ok {
			c.Release()
			return own
		}
	}
	depth := 1
	if h != nil {
		depth += h.depth
	}
	if depth > MaxDepth {
		c.Release()
		return capnp.ErrorClient(ErrTooDeep)
	}
	h = &hook{m: m, inward: !in, target: c, depth: depth}
	m.mu.Lock()
	if closed := m.closed; closed != nil {
		m.mu.Unlock()
		c.Release()
		return capnp.ErrorClient(closed)
	}
	m.hooks[h] = struct{}{}
	m.mu.Unlock()
	return capnp.NewClient(h)
}

// insideBehind returns the inside's own object (a new reference) if c is
// that object, or wraps it in wrappers, of any membranes, that each went
// out (as when another session of the same gadget handed it to a user): a
// call from the inside to its own object never leaves it, so no check of
// theirs applies. It reports false otherwise.
func (m *Membrane) insideBehind(c capnp.Client) (capnp.Client, bool) {
	c = c.AddRef()
	for range MaxDepth + 1 {
		if m.cfg.Inside(c) {
			return c, true
		}
		h := anyHookOf(c)
		if h == nil || !h.inward {
			break
		}
		h.m.mu.Lock()
		t := h.target.AddRef()
		h.m.mu.Unlock()
		c.Release()
		if c = t; !c.IsValid() {
			break
		}
	}
	c.Release()
	return capnp.Client{}, false
}

// anyHookOf returns c's hook if c is a wrapper of any membrane's, or nil.
func anyHookOf(c capnp.Client) *hook {
	snap := c.Snapshot()
	defer snap.Release()
	h, _ := snap.Brand().Value.(*hook)
	return h
}

// crossTable rewrites the capabilities from index from on of msg's cap
// table as they cross, inward if in.
func (m *Membrane) crossTable(msg *capnp.Message, from int, in bool) {
	if msg == nil {
		return
	}
	ct := msg.CapTable()
	for i := from; i < ct.Len(); i++ {
		ct.Set(capnp.CapabilityID(i), m.cross(ct.At(i), in)) // cross took over the entry's reference
	}
}

// admit checks a call on one of m's wrappers, going in if inward, and
// returns the context to make it with.
func (m *Membrane) admit(ctx context.Context, inward bool) (context.Context, error) {
	err := m.Err()
	if err == nil {
		if err = m.cfg.Check(ctx); err != nil && capnp.IsDisconnected(err) {
			m.Close(err)
		}
	}
	if err != nil {
		if m.cfg.Refused != nil && capnp.IsDisconnected(err) {
			m.cfg.Refused(err)
		}
		return ctx, err
	}
	if inward && m.cfg.Inward != nil {
		ctx = m.cfg.Inward(ctx)
	}
	return ctx, nil
}

// send makes the admitted call s, going in if inward, with sendCall.
func (m *Membrane) send(ctx context.Context, s capnp.Send, inward bool, sendCall func(context.Context, capnp.Send) (*capnp.Answer, capnp.ReleaseFunc)) (*capnp.Answer, capnp.ReleaseFunc) {
	if place := s.PlaceArgs; place != nil {
		s.PlaceArgs = func(p capnp.Struct) error {
			msg := p.Message()
			from := 0
			if msg != nil {
				from = msg.CapTable().Len()
			}
			err := place(p)
			m.crossTable(msg, from, inward)
			return err
		}
	}
	ans, release := sendCall(ctx, s)
	return m.answer(s.Method, ans, release, inward)
}

// recv delivers the admitted call r, going in if inward, with deliver.
func (m *Membrane) recv(r capnp.Recv, inward bool, deliver func(capnp.Recv) capnp.PipelineCaller) capnp.PipelineCaller {
	m.crossTable(r.Args.Message(), 0, inward)
	r.Returner = &returner{Returner: r.Returner, m: m, in: !inward}
	pc := deliver(r)
	if pc == nil {
		return nil
	}
	return pipeline{m: m, pc: pc, inward: inward}
}

// answer is ans, the answer of a call going in if inward, as the caller
// must see it: its results' capabilities wrapped, and calls pipelined on
// it made through m.
func (m *Membrane) answer(method capnp.Method, ans *capnp.Answer, release capnp.ReleaseFunc, inward bool) (*capnp.Answer, capnp.ReleaseFunc) {
	p := capnp.NewPromise(method, pipeline{m: m, pc: ans, inward: inward}, nil)
	resolved := make(chan struct{})
	var copied *capnp.Message // written before resolved is closed
	resolve := func() {
		res, err := ans.Struct()
		if err == nil {
			copied, res, err = m.copyResults(res, !inward)
		}
		p.Resolve(res.ToPtr(), err)
		close(resolved)
	}
	select {
	case <-ans.Done():
		resolve()
	default:
		go func() {
			<-ans.Done()
			resolve()
		}()
	}
	cleanup := func() {
		p.ReleaseClients()
		release()
		if copied != nil {
			copied.Release()
		}
	}
	var once sync.Once
	return p.Answer(), func() {
		once.Do(func() {
			select {
			case <-resolved:
				cleanup()
			default:
				go func() { // the caller lets go first; the copy is yet to be made
					<-resolved
					cleanup()
				}()
			}
		})
	}
}

// copyResults returns res as it crosses, inward if in: res itself if it
// carries no capability, or else a copy in a message of its own (which
// the caller releases) with the copies' capabilities wrapped.
func (m *Membrane) copyResults(res capnp.Struct, in bool) (*capnp.Message, capnp.Struct, error) {
	if res.Message() == nil || res.Message().CapTable().Len() == 0 {
		return nil, res, nil
	}
	msg, seg, err := capnp.NewMessage(capnp.MultiSegment(nil))
	if err != nil {
		return nil, capnp.Struct{}, err
	}
	dst, err := capnp.NewRootStruct(seg, res.Size())
	if err == nil {
		err = dst.CopyFrom(res)
	}
	if err != nil {
		msg.Release()
		return nil, capnp.Struct{}, err
	}
	m.crossTable(msg, 0, in)
	return msg, dst, nil
}

// A hook is one capability m wrapped.
type hook struct {
	m      *Membrane
	inward bool         // calls on it go in: it went out
	depth  int          // how many wrappers it is, itself included
	target capnp.Client // guarded by m.mu; zero once released
}

// enter admits a call on h and returns its target and context.
func (h *hook) enter(ctx context.Context) (capnp.Client, context.Context, error) {
	ctx, err := h.m.admit(ctx, h.inward)
	if err != nil {
		return capnp.Client{}, ctx, err
	}
	h.m.mu.Lock()
	t, closed := h.target.AddRef(), h.m.closed
	h.m.mu.Unlock()
	if !t.IsValid() {
		if closed == nil { // a call racing the hook's last release
			closed = ErrClosed
		}
		return capnp.Client{}, ctx, closed
	}
	return t, ctx, nil
}

func (h *hook) Send(ctx context.Context, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
	t, ctx, err := h.enter(ctx)
	if err != nil {
		return capnp.ErrorAnswer(s.Method, err), func() {}
	}
	defer t.Release()
	return h.m.send(ctx, s, h.inward, t.SendCall)
}

func (h *hook) Recv(ctx context.Context, r capnp.Recv) capnp.PipelineCaller {
	t, ctx, err := h.enter(ctx)
	if err != nil {
		r.Reject(err)
		return nil
	}
	defer t.Release()
	return h.m.recv(r, h.inward, func(r capnp.Recv) capnp.PipelineCaller { return t.RecvCall(ctx, r) })
}

// Brand lets the membrane know its own wrappers when they cross back.
func (h *hook) Brand() capnp.Brand { return capnp.Brand{Value: h} }

func (h *hook) Shutdown() {
	h.m.mu.Lock()
	t := h.target
	h.target = capnp.Client{}
	delete(h.m.hooks, h)
	h.m.mu.Unlock()
	t.Release()
}

func (h *hook) String() string {
	h.m.mu.Lock()
	t := h.target.AddRef() // String without m.mu: t may be another of m's hooks
	h.m.mu.Unlock()
	defer t.Release()
	return "membrane(" + t.String() + ")"
}

// pipeline makes calls pipelined on an answer through m: each is admitted
// and crosses like a call on a wrapper, going in if inward.
type pipeline struct {
	m      *Membrane
	pc     capnp.PipelineCaller
	inward bool
}

func (p pipeline) PipelineSend(ctx context.Context, transform []capnp.PipelineOp, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
	ctx, err := p.m.admit(ctx, p.inward)
	if err != nil {
		return capnp.ErrorAnswer(s.Method, err), func() {}
	}
	return p.m.send(ctx, s, p.inward, func(ctx context.Context, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
		return p.pc.PipelineSend(ctx, transform, s)
	})
}

func (p pipeline) PipelineRecv(ctx context.Context, transform []capnp.PipelineOp, r capnp.Recv) capnp.PipelineCaller {
	ctx, err := p.m.admit(ctx, p.inward)
	if err != nil {
		r.Reject(err)
		return nil
	}
	return p.m.recv(r, p.inward, func(r capnp.Recv) capnp.PipelineCaller {
		return p.pc.PipelineRecv(ctx, transform, r)
	})
}

// returner wraps the capabilities of a received call's results as the
// callee finishes them, crossing inward if in.
type returner struct {
	capnp.Returner
	m       *Membrane
	in      bool
	results capnp.Struct
	from    int // the results' first entry in their message's cap table
}

func (r *returner) AllocResults(sz capnp.ObjectSize) (capnp.Struct, error) {
	s, err := r.Returner.AllocResults(sz)
	if err == nil && s.Message() != nil {
		r.results, r.from = s, s.Message().CapTable().Len()
	}
	return s, err
}

func (r *returner) PrepareReturn(e error) {
	if e == nil {
		r.m.crossTable(r.results.Message(), r.from, r.in)
	}
	r.Returner.PrepareReturn(e)
}

package rpcguard

// Design: a Transport sits between one net.Conn and one rpc.Conn.
//
// rpc.Conn runs exactly two goroutines against a transport: a receive
// goroutine that calls RecvMessage in a loop, and a send goroutine that calls
// Send on the messages it built. This file adds no goroutine of its own.
//
//   - RecvMessage runs on the receive goroutine. It decodes the next message,
//     checks its counts against Limits, and either hands it to rpc.Conn,
//     answers it itself (a call over the in-flight limit gets an "overloaded"
//     exception and never reaches rpc.Conn), swallows it (the Finish for such
//     a call), or fails, which makes rpc.Conn abort and close the connection.
//   - Send runs on the send goroutine, except for the exceptions RecvMessage
//     writes itself; codec.mu serializes the two writers on the stream.
//   - answers (the peer's questions we have not both returned and seen
//     finished) is touched by both goroutines and guarded by mu.
//
// Deadlines: every read of a message's first byte waits at most IdleTimeout;
// once a message has started, all of it must arrive within MessageTimeout
// (slow-loris); every write must finish within WriteTimeout (a peer that does
// not read cannot wedge the send goroutine).

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc/transport"
	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"
)

// Limits bound what one peer can make the server hold or do. The zero value of
// a field means its default (see DefaultLimits).
type Limits struct {
	// MaxMessageSize bounds one incoming message, in bytes, header included.
	MaxMessageSize uint64
	// MaxCapTable bounds the capability table of an incoming call, return or
	// echoed message. go-capnp walks every entry, so a tiny message claiming
	// millions of empty entries would cost hundreds of MiB.
	MaxCapTable int
	// MaxPipelineOps bounds the transform (pipeline path) of a promised
	// answer, which the RPC layer also walks.
	MaxPipelineOps int
	// MaxInFlight bounds the peer's calls (and bootstraps) the server is
	// still working on. Past it a call is answered with an "overloaded"
	// exception without reaching the RPC layer.
	MaxInFlight int
	// MaxOpenAnswers bounds answers the server holds for the peer: running
	// ones plus returned ones the peer has not finished yet. It is far above
	// MaxInFlight because go-capnp clients delay every Finish by 250 ms, so a
	// fast honest client keeps thousands of returned answers open. Past it
	// calls are refused like past MaxInFlight.
	MaxOpenAnswers int
	// IdleTimeout is how long the connection may sit between messages.
	IdleTimeout time.Duration
	// MessageTimeout is how long one message may take to arrive once its first
	// byte has.
	MessageTimeout time.Duration
	// WriteTimeout bounds each outgoing message write.
	WriteTimeout time.Duration

	// CheckPipeline, if set, vets the pipeline path of a call aimed at a
	// field of an answer the peer is still waiting for: iface and method
	// name the call that answer belongs to, path lists the pointer indices
	// followed. An error rejects the call with that error before it reaches
	// the RPC layer. go-capnp v3.1.0-alpha.2 panics, killing the process,
	// when a call queued on an unresolved answer lands on a field that turns
	// out not to be a capability; the server supplies its schemas here so
	// such calls never get queued.
	CheckPipeline func(iface uint64, method uint16, path []uint16) error
}

// DefaultLimits returns the limits a server uses when nothing is configured.
func DefaultLimits() Limits {
	return Limits{
		MaxMessageSize: 32 << 20, // room for a blueprint bundle with its wasm
		MaxCapTable:    256,
		MaxPipelineOps: 64,
		MaxInFlight:    512,
		MaxOpenAnswers: 16384,
		IdleTimeout:    10 * time.Minute,
		MessageTimeout: 30 * time.Second,
		WriteTimeout:   30 * time.Second,
	}
}

// withDefaults fills every zero field from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxMessageSize == 0 {
		l.MaxMessageSize = d.MaxMessageSize
	}
	if l.MaxCapTable == 0 {
		l.MaxCapTable = d.MaxCapTable
	}
	if l.MaxPipelineOps == 0 {
		l.MaxPipelineOps = d.MaxPipelineOps
	}
	if l.MaxInFlight == 0 {
		l.MaxInFlight = d.MaxInFlight
	}
	if l.MaxOpenAnswers == 0 {
		l.MaxOpenAnswers = d.MaxOpenAnswers
	}
	if l.IdleTimeout == 0 {
		l.IdleTimeout = d.IdleTimeout
	}
	if l.MessageTimeout == 0 {
		l.MessageTimeout = d.MessageTimeout
	}
	if l.WriteTimeout == 0 {
		l.WriteTimeout = d.WriteTimeout
	}
	return l
}

// ErrLimit is wrapped by every error that closes a connection for exceeding a
// bound.
var ErrLimit = errors.New("peer exceeded a connection limit")

// ErrProtocol is wrapped by every error that closes a connection for a
// protocol violation that go-capnp v3.1.0-alpha.2 would not survive.
var ErrProtocol = errors.New("peer broke the Cap'n Proto RPC protocol")

// answerState tracks one of the peer's questions until both halves are done.
type answerState uint8

const (
	answerReturned answerState = 1 << iota
	answerFinished
)

// answer is what the transport remembers about one of the peer's questions.
type answer struct {
	state     answerState
	bootstrap bool   // a Bootstrap, whose answer is a capability, not a struct
	iface     uint64 // the call's interface and method, for CheckPipeline
	method    uint16
}

// rejectedSlack times MaxInFlight bounds how many refused calls may await
// their Finish before the peer counts as hostile (a few bytes each; go-capnp
// clients send each Finish 250 ms late).
const rejectedSlack = 64

// Transport is a transport.Transport over a net.Conn that enforces Limits.
type Transport struct {
	inner transport.Transport
	lim   Limits

	mu       sync.Mutex
	answers  map[uint32]answer   // the peer's questions rpc.Conn holds an answer for
	running  int                 // answers not yet returned
	rejected map[uint32]struct{} // questions we answered ourselves; their Finish is ours to swallow
}

// NewTransport wraps conn. Closing the transport closes conn.
func NewTransport(conn net.Conn, lim Limits) *Transport {
	lim = lim.withDefaults()
	c := &codec{conn: conn, lim: lim}
	c.reader = deadlineReader{conn: conn, messageTimeout: lim.MessageTimeout}
	c.dec = capnp.NewDecoder(&c.reader)
	c.dec.MaxMessageSize = lim.MaxMessageSize
	c.enc = capnp.NewEncoder(conn)
	return &Transport{
		inner:    transport.New(c),
		lim:      lim,
		answers:  make(map[uint32]answer),
		rejected: make(map[uint32]struct{}),
	}
}

// NewMessage allocates an outgoing message; sending a Return through it
// settles the answer it returns.
func (t *Transport) NewMessage() (transport.OutgoingMessage, error) {
	out, err := t.inner.NewMessage()
	if err != nil {
		return nil, err
	}
	return &outgoing{OutgoingMessage: out, t: t}, nil
}

// Close closes the connection.
func (t *Transport) Close() error { return t.inner.Close() }

type outgoing struct {
	transport.OutgoingMessage
	t *Transport
}

func (o *outgoing) Send() error {
	if m := o.Message(); m.Which() == rpccp.Message_Which_return {
		if ret, err := m.Return(); err == nil {
			o.t.settle(ret.AnswerId(), answerReturned)
		}
	}
	return o.OutgoingMessage.Send()
}

// settle records half of an answer's completion and forgets it once both
// halves happened.
func (t *Transport) settle(id uint32, half answerState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.answers[id]
	if !ok {
		return
	}
	if half == answerReturned && a.state&answerReturned == 0 {
		t.running--
	}
	a.state |= half
	if a.state == answerReturned|answerFinished {
		delete(t.answers, id)
	} else {
		t.answers[id] = a
	}
}

// verdict is what RecvMessage does with one inspected message.
type verdict int

const (
	deliver verdict = iota // hand it to rpc.Conn
	swallow                // drop it: it concerns a question rpc.Conn never saw
	reject                 // answer it with an exception ourselves
)

// refusal is the exception a rejected question gets.
type refusal struct {
	qid    uint32
	typ    rpccp.Exception_Type
	reason string
}

// RecvMessage returns the next message that is within limits. A message past
// a bound returns an error wrapping ErrLimit, and rpc.Conn closes the
// connection.
func (t *Transport) RecvMessage() (transport.IncomingMessage, error) {
	for {
		in, err := t.inner.RecvMessage()
		if err != nil {
			return nil, err
		}
		v, ref, err := t.inspect(in.Message())
		if err != nil {
			in.Release()
			return nil, err
		}
		switch v {
		case deliver:
			return in, nil
		case swallow:
			in.Release()
		case reject:
			in.Release()
			if err := t.sendException(ref); err != nil {
				return nil, err
			}
		}
	}
}

// inspect checks m against the limits and decides its fate. For reject it
// also returns what to answer.
func (t *Transport) inspect(m rpccp.Message) (verdict, refusal, error) {
	switch m.Which() {
	case rpccp.Message_Which_call:
		call, err := m.Call()
		if err != nil {
			return deliver, refusal{}, nil // rpc.Conn reports malformed messages itself
		}
		if selfPipelined(call) {
			// rpc.Conn registers the answer before resolving the target,
			// finds the call's own answer without a pipeline caller and
			// dereferences nil in a library goroutine: the process dies
			// (found by FuzzGuardedConnSurvivesArbitraryBytes).
			return deliver, refusal{}, fmt.Errorf("%w: call %d is pipelined onto its own answer", ErrProtocol, call.QuestionId())
		}
		refsRejected, pipeErr, err := t.checkCall(call)
		if err != nil {
			return deliver, refusal{}, err
		}
		return t.admit(call.QuestionId(), answer{iface: call.InterfaceId(), method: call.MethodId()}, refsRejected, pipeErr)

	case rpccp.Message_Which_bootstrap:
		b, err := m.Bootstrap()
		if err != nil {
			return deliver, refusal{}, nil
		}
		return t.admit(b.QuestionId(), answer{bootstrap: true}, false, nil)

	case rpccp.Message_Which_finish:
		fin, err := m.Finish()
		if err != nil {
			return deliver, refusal{}, nil
		}
		id := fin.QuestionId()
		t.mu.Lock()
		_, ours := t.rejected[id]
		delete(t.rejected, id)
		t.mu.Unlock()
		if ours {
			return swallow, refusal{}, nil
		}
		t.settle(id, answerFinished)
		return deliver, refusal{}, nil

	case rpccp.Message_Which_return:
		ret, err := m.Return()
		if err != nil || ret.Which() != rpccp.Return_Which_results {
			return deliver, refusal{}, nil
		}
		payload, err := ret.Results()
		if err != nil {
			return deliver, refusal{}, nil
		}
		_, _, err = t.checkPayload(payload)
		return deliver, refusal{}, err

	case rpccp.Message_Which_resolve:
		res, err := m.Resolve()
		if err != nil || res.Which() != rpccp.Resolve_Which_cap {
			return deliver, refusal{}, nil
		}
		desc, err := res.Cap()
		if err != nil {
			return deliver, refusal{}, nil
		}
		_, _, err = t.checkCapDescriptor(desc)
		return deliver, refusal{}, err

	case rpccp.Message_Which_disembargo:
		d, err := m.Disembargo()
		if err != nil {
			return deliver, refusal{}, nil
		}
		target, err := d.Target()
		if err != nil {
			return deliver, refusal{}, nil
		}
		_, _, err = t.checkTarget(target)
		return deliver, refusal{}, err

	case rpccp.Message_Which_unimplemented:
		// The peer echoes one of our messages back; rpc.Conn parses it, so
		// it gets the same bounds, without any bookkeeping.
		echoed, err := m.Unimplemented()
		if err != nil {
			return deliver, refusal{}, nil
		}
		if echoed.Which() == rpccp.Message_Which_call {
			if call, err := echoed.Call(); err == nil {
				_, _, err = t.checkCall(call)
				return deliver, refusal{}, err
			}
		}
		return deliver, refusal{}, nil

	case rpccp.Message_Which_release, rpccp.Message_Which_abort:
		return deliver, refusal{}, nil
	}
	// Anything else (level 3 messages, types from a newer protocol) rpc.Conn
	// would echo back as "unimplemented" by copying the whole message, and
	// that copy has no depth limit: a message whose pointers form a cycle
	// overflows the stack and kills the process (found by
	// FuzzGuardedConnSurvivesArbitraryBytes). gadgetd speaks level 1 only.
	return deliver, refusal{}, fmt.Errorf("%w: unsupported message type %v", ErrProtocol, m.Which())
}

// admit decides whether a new question from the peer may proceed.
func (t *Transport) admit(id uint32, a answer, refsRejected bool, pipeErr error) (verdict, refusal, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ref := refusal{qid: id, typ: rpccp.Exception_Type_overloaded}
	switch {
	case refsRejected:
		ref.typ, ref.reason = rpccp.Exception_Type_failed, "pipelined onto a call that was refused"
	case pipeErr != nil:
		ref.typ, ref.reason = rpccp.Exception_Type_failed, pipeErr.Error()
	case t.running >= t.lim.MaxInFlight || len(t.answers) >= t.lim.MaxOpenAnswers:
		ref.reason = fmt.Sprintf("connection overloaded: at most %d calls in flight and %d unfinished answers", t.lim.MaxInFlight, t.lim.MaxOpenAnswers)
	default:
		t.answers[id] = a
		t.running++
		return deliver, refusal{}, nil
	}
	// A peer that never finishes what we reject must not grow this set
	// without bound either. The slack lets an honest client's burst be
	// refused before its Finish messages catch up.
	if len(t.rejected) >= rejectedSlack*t.lim.MaxInFlight {
		return deliver, refusal{}, fmt.Errorf("%w: %d rejected calls were never finished", ErrLimit, len(t.rejected))
	}
	t.rejected[id] = struct{}{}
	return reject, ref, nil
}

// checkCall bounds a call's target and parameters. It reports whether the
// call depends on a question we rejected (such a call must be rejected too,
// because rpc.Conn has never heard of that question) and whether
// CheckPipeline refuses one of its pipeline paths.
func (t *Transport) checkCall(call rpccp.Call) (refsRejected bool, pipeErr, err error) {
	if target, err := call.Target(); err == nil {
		if refsRejected, pipeErr, err = t.checkTarget(target); err != nil {
			return false, nil, err
		}
	}
	params, err := call.Params()
	if err != nil {
		return refsRejected, pipeErr, nil
	}
	r, perr, err := t.checkPayload(params)
	return refsRejected || r, firstErr(pipeErr, perr), err
}

// selfPipelined reports whether call targets the answer to itself.
func selfPipelined(call rpccp.Call) bool {
	target, err := call.Target()
	if err != nil || target.Which() != rpccp.MessageTarget_Which_promisedAnswer {
		return false
	}
	pa, err := target.PromisedAnswer()
	return err == nil && pa.QuestionId() == call.QuestionId()
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (t *Transport) checkTarget(target rpccp.MessageTarget) (refsRejected bool, pipeErr, err error) {
	if target.Which() != rpccp.MessageTarget_Which_promisedAnswer {
		return false, nil, nil
	}
	pa, err := target.PromisedAnswer()
	if err != nil {
		return false, nil, nil
	}
	return t.checkPromisedAnswer(pa)
}

func (t *Transport) checkPromisedAnswer(pa rpccp.PromisedAnswer) (refsRejected bool, pipeErr, err error) {
	ops, err := pa.Transform()
	if err != nil {
		return false, nil, nil
	}
	if ops.Len() > t.lim.MaxPipelineOps {
		return false, nil, fmt.Errorf("%w: pipeline path of %d steps is longer than the limit of %d", ErrLimit, ops.Len(), t.lim.MaxPipelineOps)
	}
	var path []uint16
	for i := 0; i < ops.Len(); i++ {
		if op := ops.At(i); op.Which() == rpccp.PromisedAnswer_Op_Which_getPointerField {
			path = append(path, op.GetPointerField())
		}
	}
	t.mu.Lock()
	_, refsRejected = t.rejected[pa.QuestionId()]
	a, known := t.answers[pa.QuestionId()]
	t.mu.Unlock()
	// Only answers still running can queue calls; returned ones are
	// resolved by rpc.Conn without the faulty queue.
	if refsRejected || !known || a.state&answerReturned != 0 || len(path) == 0 {
		return refsRejected, nil, nil
	}
	if a.bootstrap {
		return false, errors.New("pipelined call names a field of the bootstrap capability, which has none"), nil
	}
	if t.lim.CheckPipeline != nil {
		pipeErr = t.lim.CheckPipeline(a.iface, a.method, path)
	}
	return false, pipeErr, nil
}

func (t *Transport) checkPayload(p rpccp.Payload) (refsRejected bool, pipeErr, err error) {
	if !p.HasCapTable() {
		return false, nil, nil
	}
	caps, err := p.CapTable()
	if err != nil {
		return false, nil, nil
	}
	if caps.Len() > t.lim.MaxCapTable {
		return false, nil, fmt.Errorf("%w: capability table of %d entries is longer than the limit of %d", ErrLimit, caps.Len(), t.lim.MaxCapTable)
	}
	for i := 0; i < caps.Len(); i++ {
		r, perr, err := t.checkCapDescriptor(caps.At(i))
		if err != nil {
			return false, nil, err
		}
		refsRejected = refsRejected || r
		pipeErr = firstErr(pipeErr, perr)
	}
	return refsRejected, pipeErr, nil
}

func (t *Transport) checkCapDescriptor(d rpccp.CapDescriptor) (refsRejected bool, pipeErr, err error) {
	if d.Which() != rpccp.CapDescriptor_Which_receiverAnswer {
		return false, nil, nil
	}
	pa, err := d.ReceiverAnswer()
	if err != nil {
		return false, nil, nil
	}
	return t.checkPromisedAnswer(pa)
}

// sendException answers a refused question. The default
// releaseParamCaps=true tells the peer its parameter capabilities are
// released, so nothing leaks on its side either.
func (t *Transport) sendException(ref refusal) error {
	out, err := t.inner.NewMessage()
	if err != nil {
		return err
	}
	defer out.Release()
	ret, err := out.Message().NewReturn()
	if err != nil {
		return err
	}
	ret.SetAnswerId(ref.qid)
	ex, err := ret.NewException()
	if err != nil {
		return err
	}
	ex.SetType(ref.typ)
	if err := ex.SetReason(ref.reason); err != nil {
		return err
	}
	return out.Send()
}

// codec frames messages on conn with size bounds and deadlines. Decode is
// only called from the receive goroutine; Encode may be called from both
// goroutines, so mu serializes writers.
type codec struct {
	conn   net.Conn
	lim    Limits
	reader deadlineReader
	dec    *capnp.Decoder

	mu  sync.Mutex
	enc *capnp.Encoder
}

func (c *codec) Decode() (*capnp.Message, error) {
	if err := c.reader.awaitMessage(c.lim.IdleTimeout); err != nil {
		return nil, err
	}
	msg, err := c.dec.Decode()
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("%w: %v", ErrLimit, err)
		}
		return nil, err
	}
	return msg, nil
}

func (c *codec) Encode(m *capnp.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.conn.SetWriteDeadline(time.Now().Add(c.lim.WriteTimeout)); err != nil {
		return err
	}
	return c.enc.Encode(m)
}

func (c *codec) Close() error { return c.conn.Close() }

// deadlineReader gives the wait for a message's first byte one deadline and
// the rest of the message another.
type deadlineReader struct {
	conn           net.Conn
	messageTimeout time.Duration
	started        bool
}

// awaitMessage arms the idle deadline for the next message.
func (r *deadlineReader) awaitMessage(idle time.Duration) error {
	r.started = false
	return r.conn.SetReadDeadline(time.Now().Add(idle))
}

func (r *deadlineReader) Read(p []byte) (int, error) {
	n, err := r.conn.Read(p)
	if n > 0 && !r.started {
		r.started = true
		if derr := r.conn.SetReadDeadline(time.Now().Add(r.messageTimeout)); derr != nil && err == nil {
			err = derr
		}
	}
	return n, err
}

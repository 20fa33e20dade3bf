package rpcguard

// Design: a Transport sits between one net.Conn and one rpc.Conn.
//
// Goroutines. rpc.Conn runs two goroutines against a transport: a receive
// goroutine that calls RecvMessage in a loop, and a send goroutine that calls
// Send on the messages it built. The Transport adds one more, the reader,
// started by the first RecvMessage: it decodes messages off the wire, checks
// them against Limits and files each one as ready (for RecvMessage to hand to
// rpc.Conn), held (see below), swallowed, or answered with an exception it
// writes itself. RecvMessage only takes ready messages, in order. All state
// is guarded by mu. Each goroutine that waits on it has a condition of its
// own, signalled only when what it waits for may have changed: readyCond
// wakes RecvMessage (a message is ready, or the connection ends),
// readerCond the reader (room in ready, or the send queue drained), and
// queueCond the writer (sendqueue.go); with one condition for all, each
// message woke every waiter several times over. codec.mu serializes the two
// writers of the stream (the send goroutine and the reader's own
// exceptions).
//
// Holding: rpc.Conn must never queue a call on an unreturned answer (in
// go-capnp v3.1.0-alpha.2 that queue can panic the process; the story is in
// docs/RATIONALE.md). So a message that names one of the peer's questions
// whose Return has not been sent yet (a call or disembargo aimed at it, a
// capability descriptor pointing into it, the Finish of a held call) is held
// here until that Return goes out through Send, and only then handed to
// rpc.Conn. Held messages keep their relative order when they name a common
// question (E-order); messages that name nothing held go ahead. A connection
// holds at most 2×MaxInFlight messages, and at most MaxInFlightBytes of
// those that are not calls; past either it is closed.
//
// Exports: exports.go mirrors the reference counts of rpc.Conn's export
// table from the messages that pass, to bound what the peer holds of ours.
// A bound hit by the server's own outgoing message ends the connection
// through abort, as one hit by the peer's does through the reader.
//
// Backpressure: messages for the peer go through the Transport's own send
// queue (sendqueue.go), and the reader reads the next message only when
// that queue is empty. A peer that stops reading blocks the server's
// writes, and then its own calls stay in the socket. The answers that do
// pile up (those of calls read before the first write blocked) are in the
// queue, where their bytes count against the connection's, its user's and
// the server's in-flight byte bounds, and their calls against the call
// bounds (budget.go), until written.
//
// Deadlines: every read of a message's first byte waits at most IdleTimeout;
// once a message has started, all of it must arrive within MessageTimeout
// (slow-loris); every write must finish within WriteTimeout (a peer that does
// not read cannot wedge the send goroutine).

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

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
	// still working on, held ones included. Past it a call is answered with
	// an "overloaded" exception without reaching the RPC layer. Twice it
	// bounds the messages of all kinds held for answers still running;
	// past that the connection is closed.
	MaxInFlight int
	// MaxInFlightBytes bounds the message bytes of the peer's calls the
	// server is still working on, held ones included, together with the
	// bytes of messages (answers) the server has for the peer and has not
	// written yet: with MaxInFlight it bounds what the peer's calls make
	// the server hold. Past it a call is answered "overloaded" like past
	// MaxInFlight. It also bounds, apart,
	// the bytes of other messages held for answers still running (Finish,
	// Release, Disembargo); past that the connection is closed.
	MaxInFlightBytes uint64
	// MaxOpenAnswers bounds answers the server holds for the peer: running
	// ones plus returned ones the peer has not finished yet. It is far above
	// MaxInFlight because go-capnp clients delay every Finish by 250 ms, so a
	// fast honest client keeps thousands of returned answers open. Past it
	// calls are refused like past MaxInFlight.
	MaxOpenAnswers int
	// MaxExports bounds the server's capabilities the peer holds at once
	// (the export table rpc.Conn keeps for it: every capability the server
	// sent and the peer has not released). A peer that keeps taking
	// capabilities without releasing them is disconnected past it.
	MaxExports int
	// IdleTimeout is how long the connection may sit between messages.
	IdleTimeout time.Duration
	// MessageTimeout is how long one message may take to arrive once its first
	// byte has.
	MessageTimeout time.Duration
	// WriteTimeout bounds each outgoing message write.
	WriteTimeout time.Duration

	// MaxReceiving bounds the bytes of messages still arriving on all of a
	// Server's connections together (a Transport alone does not bound it).
	// A message that would take them past it closes its connection.
	// MaxUserReceiving bounds the same for all the connections of one user
	// (the user Peer.Authenticated names), so that no user can fill
	// MaxReceiving alone and get everyone else's next message refused;
	// past it the user's own message closes its connection. Peers that
	// have not logged in send only small messages
	// (Unauthenticated.MaxMessageSize), from few connections per address
	// and few in all (Unauthenticated.MaxConns).
	// Both are raised to MaxMessageSize if smaller, so that one message of
	// the largest size can always arrive.
	MaxReceiving     uint64
	MaxUserReceiving uint64

	// MaxUserInFlight and MaxUserInFlightBytes bound what MaxInFlight and
	// MaxInFlightBytes bound for one connection, for all the connections
	// of one user together (the user Peer.Authenticated names), so that
	// opening more connections buys a user nothing. MaxServerInFlight and
	// MaxServerInFlightBytes bound the same for all of a Server's
	// connections, logged in or not. A call counts from its arrival until
	// its Return has been written to the socket, and the bytes bounds also
	// count the messages waiting to be written, so answers waiting behind a
	// peer that does not read keep counting. Past any of them a call is
	// answered "overloaded" without reaching the RPC layer (budget.go).
	MaxUserInFlight        int
	MaxUserInFlightBytes   uint64
	MaxServerInFlight      int
	MaxServerInFlightBytes uint64

	// MaxUserConns bounds the connections one user may have logged in at
	// once, so that no user can take every connection a Server has room
	// for: past it, Peer.Authenticated fails and the connection stays a
	// stranger (and is the first to go when the server is full).
	MaxUserConns int

	// Unauthenticated is the budget of a peer until it proves who it is
	// (Peer.Authenticated); the fields above apply from then on. Every
	// bound scales with what the peer has proved: a stranger may send only
	// small messages, few at a time, and must keep talking.
	Unauthenticated Budget
}

// Budget is what a peer may make the server hold before it has
// authenticated. The zero value of a field means its default.
type Budget struct {
	// MaxMessageSize bounds one incoming message, header included.
	MaxMessageSize uint64
	// MaxInFlight bounds the peer's calls the server is working on.
	MaxInFlight int
	// MaxInFlightBytes bounds the message bytes of those calls.
	MaxInFlightBytes uint64
	// IdleTimeout is how long the connection may sit between messages.
	IdleTimeout time.Duration
	// LoginTimeout is how long a connection may go on without
	// authenticating at all; a peer that keeps talking but never logs in
	// would otherwise hold a connection slot for good.
	LoginTimeout time.Duration
	// MaxPerAddress bounds a listener's connections from one network
	// address that have not authenticated yet, so one host cannot take
	// every slot.
	MaxPerAddress int
	// MaxConns bounds a listener's connections that have not authenticated
	// yet, from all addresses together; past it a newcomer takes the place
	// of the oldest. Its default is as many as fit MaxUserReceiving with a
	// message of MaxMessageSize each: strangers together can hold at most
	// one user's share of MaxReceiving in unfinished messages, however
	// many addresses they come from.
	MaxConns int
	// LogRate (lines per second) and LogBurst bound the lines a Server
	// logs about peers that have not authenticated, all of them together:
	// refused connections, and connections ended before login. Lines past
	// them are counted, and one line every 10 s says how many were dropped
	// (strangerlog.go).
	LogRate  float64
	LogBurst int
}

// DefaultLimits returns the limits a server uses when nothing is configured.
func DefaultLimits() Limits {
	return Limits{
		MaxMessageSize:   9 << 20, // a guest frame (8 MiB) and its envelope; blueprints are streamed
		MaxCapTable:      256,
		MaxPipelineOps:   64,
		MaxInFlight:      512,
		MaxInFlightBytes: 64 << 20,
		MaxOpenAnswers:   16384,
		MaxExports:       16384,
		IdleTimeout:      10 * time.Minute,
		MessageTimeout:   30 * time.Second,
		WriteTimeout:     30 * time.Second,
		MaxReceiving:     256 << 20,
		MaxUserReceiving: 64 << 20, // a quarter: four users' worth, as for calls in flight
		// A user gets two connections' worth of calls, however many
		// connections it opens; the server four users' worth of bytes.
		// The process holds about four times the bytes of the calls it
		// is working on (copies into the guest, garbage), so 512 MiB of
		// calls is about 2 GiB of memory at worst.
		MaxUserInFlight:        1024,
		MaxUserInFlightBytes:   128 << 20,
		MaxServerInFlight:      4096,
		MaxServerInFlightBytes: 512 << 20,
		// A browser shell holds one connection, and one per gadget it has
		// open; eight users at their bound fill a default server.
		MaxUserConns: 128,
		Unauthenticated: Budget{
			MaxMessageSize:   64 << 10,
			MaxInFlight:      8,
			MaxInFlightBytes: 256 << 10,
			IdleTimeout:      time.Minute,
			LoginTimeout:     time.Minute,
			MaxPerAddress:    64,
			LogRate:          1,
			LogBurst:         20,
		},
	}
}

// withDefaults fills every zero field from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	l.MaxMessageSize = cmp.Or(l.MaxMessageSize, d.MaxMessageSize)
	l.MaxCapTable = cmp.Or(l.MaxCapTable, d.MaxCapTable)
	l.MaxPipelineOps = cmp.Or(l.MaxPipelineOps, d.MaxPipelineOps)
	l.MaxInFlight = cmp.Or(l.MaxInFlight, d.MaxInFlight)
	l.MaxInFlightBytes = cmp.Or(l.MaxInFlightBytes, max(d.MaxInFlightBytes, l.MaxMessageSize))
	l.MaxOpenAnswers = cmp.Or(l.MaxOpenAnswers, d.MaxOpenAnswers)
	l.MaxExports = cmp.Or(l.MaxExports, d.MaxExports)
	l.IdleTimeout = cmp.Or(l.IdleTimeout, d.IdleTimeout)
	l.MessageTimeout = cmp.Or(l.MessageTimeout, d.MessageTimeout)
	l.WriteTimeout = cmp.Or(l.WriteTimeout, d.WriteTimeout)
	l.MaxReceiving = cmp.Or(l.MaxReceiving, max(d.MaxReceiving, 2*l.MaxMessageSize))
	l.MaxUserReceiving = cmp.Or(l.MaxUserReceiving, max(l.MaxReceiving/4, l.MaxMessageSize))
	// A receive budget smaller than one message would refuse a message of
	// the largest size allowed even when nothing else is arriving.
	l.MaxReceiving = max(l.MaxReceiving, l.MaxMessageSize)
	l.MaxUserReceiving = max(l.MaxUserReceiving, l.MaxMessageSize)
	l.MaxUserInFlight = cmp.Or(l.MaxUserInFlight, d.MaxUserInFlight)
	l.MaxUserConns = cmp.Or(l.MaxUserConns, d.MaxUserConns)
	l.MaxUserInFlightBytes = cmp.Or(l.MaxUserInFlightBytes, max(d.MaxUserInFlightBytes, l.MaxMessageSize))
	l.MaxServerInFlight = cmp.Or(l.MaxServerInFlight, d.MaxServerInFlight)
	l.MaxServerInFlightBytes = cmp.Or(l.MaxServerInFlightBytes, max(d.MaxServerInFlightBytes, l.MaxMessageSize))
	u, du := &l.Unauthenticated, d.Unauthenticated
	u.MaxMessageSize = cmp.Or(u.MaxMessageSize, min(du.MaxMessageSize, l.MaxMessageSize))
	u.MaxInFlight = cmp.Or(u.MaxInFlight, min(du.MaxInFlight, l.MaxInFlight))
	u.MaxInFlightBytes = cmp.Or(u.MaxInFlightBytes, min(max(du.MaxInFlightBytes, u.MaxMessageSize), l.MaxInFlightBytes))
	u.IdleTimeout = cmp.Or(u.IdleTimeout, min(du.IdleTimeout, l.IdleTimeout))
	u.LoginTimeout = cmp.Or(u.LoginTimeout, du.LoginTimeout)
	u.MaxPerAddress = cmp.Or(u.MaxPerAddress, du.MaxPerAddress)
	u.MaxConns = cmp.Or(u.MaxConns, max(1, int(l.MaxUserReceiving/u.MaxMessageSize)))
	u.LogRate = cmp.Or(u.LogRate, du.LogRate)
	u.LogBurst = cmp.Or(u.LogBurst, du.LogBurst)
	return l
}

// authenticated is the budget of a peer that has proved who it is.
func (l Limits) authenticated() Budget {
	return Budget{MaxMessageSize: l.MaxMessageSize, MaxInFlight: l.MaxInFlight, MaxInFlightBytes: l.MaxInFlightBytes, IdleTimeout: l.IdleTimeout}
}

// errClosed is what Send returns once the transport is closed.
var errClosed = errors.New("connection closed")

// ErrLimit is wrapped by every error that closes a connection for exceeding a
// bound.
var ErrLimit = errors.New("peer exceeded a connection limit")

// ErrProtocol is wrapped by every error that closes a connection for a
// protocol violation that go-capnp v3.1.0-alpha.2 would not survive.
var ErrProtocol = errors.New("peer broke the Cap'n Proto RPC protocol")

// answer is one of the peer's questions, from admission until done.
type answer struct {
	state answerState
	size  uint64    // bytes of the message that asked it, until it returns
	user  *inFlight // the user budget it is charged to, if any
}

// answerState tracks one of the peer's questions until it is done.
type answerState uint8

const (
	answerHeld     answerState = 1 << iota // admitted, not yet handed to rpc.Conn
	answerReturned                         // rpc.Conn sent its Return
	answerFinished                         // the peer sent its Finish
)

// rejectedSlack times MaxInFlight bounds how many refused calls may await
// their Finish before the peer counts as hostile (a few bytes each; go-capnp
// clients send each Finish 250 ms late).
const rejectedSlack = 64

// readAhead bounds the messages the reader decodes before rpc.Conn takes
// them, so a peer cannot make the server buffer its whole send window.
const readAhead = 16

// maxHeld bounds the messages held for unreturned answers: the calls that
// may be in flight, and as many other messages (Finish, Release, Disembargo)
// behind them. Past it, or past MaxInFlightBytes of those other messages
// (held calls count in runBytes already), the connection is closed (file).
func maxHeld(b Budget) int { return 2 * b.MaxInFlight }

// Transport is a transport.Transport over a net.Conn that enforces Limits.
type Transport struct {
	inner         transport.Transport
	codec         *codec
	loginBy       time.Time                            // when an unauthenticated peer is out of time
	onAuth        func(user string) (*inFlight, error) // run by the first Authenticated that succeeds, if set; returns the user's budget
	server        *inFlight                            // all of a Server's connections' calls; nil: a Transport alone
	authMu        sync.Mutex                           // serializes Authenticated and endAuth
	authDone      bool                                 // authenticated, or closed: Authenticated does nothing more; guarded by authMu
	userLog       atomic.Pointer[rateLog]              // the lines about this connection, once logged in (ratelog.go)
	lim           Limits
	start         sync.Once
	writer        sync.Once
	authenticated atomic.Bool

	mu sync.Mutex
	// readyCond, readerCond and queueCond wake RecvMessage, the reader
	// and the writer (see the design comment); all three use mu.
	readyCond, readerCond, queueCond sync.Cond

	answers  map[uint32]answer   // the peer's questions, from admission until returned and finished
	running  int                 // answers whose Return has not been written yet
	runBytes uint64              // their message bytes
	queue    []*queued           // messages for the peer not yet written (sendqueue.go)
	unsent   uint64              // their bytes
	writing  bool                // the writer is writing a message it took off queue
	writeErr error               // why the writer stopped; Send returns it
	user     *inFlight           // the budget of the user the peer logged in as; nil before
	rejected map[uint32]struct{} // questions we answered ourselves; their Finish is ours to swallow
	held     []*heldMessage      // messages rpc.Conn must not see yet, in arrival order
	heldSize uint64              // message bytes of held messages that are not calls
	exports  exportTable         // what the peer holds of ours, mirrored from rpc.Conn's
	ready    []transport.IncomingMessage
	readErr  error // why the reader stopped; RecvMessage returns it once ready is empty
	abortErr error // a bound the server's own messages hit; RecvMessage returns it at once
	closed   bool
}

// heldMessage is an incoming message waiting for questions it names.
type heldMessage struct {
	in   transport.IncomingMessage
	refs []ref
	size uint64 // its bytes in heldSize: 0 for a call, counted in runBytes
}

// ref is something a message names that can order it behind held messages:
// one of the peer's questions, or one of our exports.
type ref struct {
	kind refKind
	id   uint32
}

type refKind uint8

const (
	// refAnswer names the answer to a question: the message may reach
	// rpc.Conn once rpc.Conn knows the question and has sent its Return.
	refAnswer refKind = iota
	// refFinish is a question's Finish: rpc.Conn must know the question.
	refFinish
	// refExport names one of our exports (a call target, a capability
	// passed back, a Release). It never holds a message by itself, but a
	// Release must not overtake a held message that still uses the export.
	refExport
)

// same reports whether a and b name the same thing, for ordering.
func (a ref) same(b ref) bool {
	return a.id == b.id && (a.kind == refExport) == (b.kind == refExport)
}

// NewTransport wraps conn. Closing the transport closes conn.
func NewTransport(conn net.Conn, lim Limits) *Transport {
	lim = lim.withDefaults()
	t := &Transport{
		lim:      lim,
		loginBy:  time.Now().Add(lim.Unauthenticated.LoginTimeout),
		answers:  make(map[uint32]answer),
		rejected: make(map[uint32]struct{}),
		exports:  newExportTable(),
	}
	t.codec = newCodec(conn, lim, t.budget)
	t.inner = transport.New(t.codec)
	t.readyCond.L, t.readerCond.L, t.queueCond.L = &t.mu, &t.mu, &t.mu
	return t
}

// Authenticated lifts the peer from Limits.Unauthenticated to the full
// Limits, from the next message on. The server calls it once the peer has
// proved who it is (a successful login); user names who, and the peer's
// calls from then on share the budget of every connection of that user
// (on a Server). A second login on the same connection keeps the first
// user's budget. It fails, and the peer stays a stranger, when user already
// has MaxUserConns connections logged in.
func (t *Transport) Authenticated(user string) error {
	t.authMu.Lock()
	defer t.authMu.Unlock()
	if t.authDone {
		return nil
	}
	if t.onAuth != nil {
		b, err := t.onAuth(user)
		if err != nil {
			return err
		}
		t.mu.Lock()
		t.user = b
		t.mu.Unlock()
		t.userLog.Store(b.log)
		t.codec.recv.Store(b.receiving) // before the limit lifts: see readFrame
	}
	t.authDone = true
	t.authenticated.Store(true)
	return nil
}

// endAuth makes later Authenticated calls do nothing: the connection has
// closed, and a login still running must not join its user after that.
func (t *Transport) endAuth() {
	t.authMu.Lock()
	t.authDone = true
	t.authMu.Unlock()
}

// budget is what the peer may make the server hold now. A stranger's idle
// time also ends at its login deadline.
func (t *Transport) budget() Budget {
	if t.authenticated.Load() {
		return t.lim.authenticated()
	}
	b := t.lim.Unauthenticated
	b.IdleTimeout = max(min(b.IdleTimeout, time.Until(t.loginBy)), time.Nanosecond)
	return b
}

// checkLoginDeadline fails a peer that is still a stranger past its login
// deadline, however busy it keeps the connection.
func (t *Transport) checkLoginDeadline() error {
	if !t.authenticated.Load() && time.Now().After(t.loginBy) {
		return fmt.Errorf("%w: the connection did not log in within %v", ErrLimit, t.lim.Unauthenticated.LoginTimeout)
	}
	return nil
}

// NewMessage allocates an outgoing message; sending a Return through it
// settles the answer it returns and releases what was held behind it.
func (t *Transport) NewMessage() (transport.OutgoingMessage, error) {
	out, err := t.inner.NewMessage()
	if err != nil {
		return nil, err
	}
	return &outgoing{OutgoingMessage: out, t: t}, nil
}

// Close closes the connection, drops every message rpc.Conn has not taken,
// and gives the budgets shared with other connections back what this one's
// unanswered calls took.
func (t *Transport) Close() error {
	t.mu.Lock()
	if !t.closed {
		for _, a := range t.answers {
			if a.state&answerReturned == 0 {
				t.server.give(a.size)
				a.user.give(a.size)
			}
		}
		t.dropQueue(errClosed)
	}
	t.closed = true
	held, ready := t.held, t.ready
	t.held, t.ready = nil, nil
	t.wakeAll()
	t.mu.Unlock()
	for _, h := range held {
		h.in.Release()
	}
	for _, in := range ready {
		in.Release()
	}
	return t.inner.Close()
}

// Send queues the message for the writer (sendqueue.go) and returns: a
// Return settles its answer, and stops counting against the in-flight
// bounds, only once written, however long the peer takes to read. rpc.Conn
// has marked the answer's results ready before queueing the Return, so from
// then on it resolves calls that name the answer without queueing them;
// releasing those held behind it after the write only delays them.
// Capabilities the message hands the peer are counted against MaxExports;
// past it the message is not sent and the error makes rpc.Conn fail the
// call or, for a Return, the connection.
func (o *outgoing) Send() error {
	m := o.Message()
	if err := o.t.countExports(m); err != nil {
		o.t.abort(err)
		return err
	}
	return o.t.enqueue(o)
}

// settle records that question id was returned or finished, forgets it once
// both happened, and releases held messages that were waiting for it.
func (t *Transport) settle(id uint32, half answerState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.settleLocked(id, half)
}

// settleLocked is settle for a caller that holds mu.
func (t *Transport) settleLocked(id uint32, half answerState) {
	a, ok := t.answers[id]
	if !ok || t.closed { // Close gave back what the answer took
		return
	}
	if half == answerReturned && a.state&answerReturned == 0 {
		t.running--
		t.runBytes -= a.size
		t.server.give(a.size)
		a.user.give(a.size)
	}
	a.state |= half
	if a.state&(answerReturned|answerFinished) == answerReturned|answerFinished {
		delete(t.answers, id)
	} else {
		t.answers[id] = a
	}
	if half == answerReturned {
		t.releaseHeld()
	}
}

// RecvMessage returns the next message rpc.Conn may see. When the reader has
// stopped (the peer left, or broke a limit, which wraps ErrLimit) it returns
// why, and rpc.Conn closes the connection.
func (t *Transport) RecvMessage() (transport.IncomingMessage, error) {
	t.start.Do(func() { go t.read() })
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.ready) == 0 && t.readErr == nil && t.abortErr == nil && !t.closed {
		t.readyCond.Wait()
	}
	if t.abortErr != nil {
		return nil, t.abortErr
	}
	if len(t.ready) == 0 {
		if t.readErr != nil {
			return nil, t.readErr
		}
		return nil, net.ErrClosed
	}
	in := t.ready[0]
	t.ready[0] = nil
	t.ready = t.ready[1:]
	t.readerCond.Signal() // room for the reader
	return in, nil
}

// abort makes rpc.Conn end the connection with err: the next RecvMessage
// returns it, and the reader stops.
func (t *Transport) abort(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.abortErr == nil {
		t.abortErr = err
	}
	t.wakeAll()
}

// wakeAll wakes every goroutine waiting on the transport: it is closing or
// aborting. The caller holds mu.
func (t *Transport) wakeAll() {
	t.readyCond.Broadcast()
	t.readerCond.Broadcast()
	t.queueCond.Broadcast()
}

// read is the reader goroutine: it decodes and files messages until the
// connection fails or closes.
func (t *Transport) read() {
	for {
		t.mu.Lock()
		for len(t.ready) >= readAhead && !t.closed && t.abortErr == nil {
			t.readerCond.Wait()
		}
		stop := t.closed || t.abortErr != nil
		t.mu.Unlock()
		if stop {
			return
		}
		// A peer that does not read what the server writes gets nothing
		// more read from it: otherwise it could keep sending calls whose
		// answers pile up unsent in rpc.Conn's queue.
		t.awaitSent()
		in, err := t.inner.RecvMessage()
		if err == nil {
			if err = t.checkLoginDeadline(); err != nil {
				in.Release()
			}
		}
		if err == nil {
			err = t.file(in)
		} else if lerr := t.checkLoginDeadline(); lerr != nil && errors.Is(err, ErrLimit) {
			err = lerr // the idle timeout that ended it was the login deadline
		}
		if err != nil {
			t.mu.Lock()
			t.readErr = err
			t.readyCond.Broadcast()
			t.mu.Unlock()
			return
		}
	}
}

// file decides the fate of one incoming message.
func (t *Transport) file(in transport.IncomingMessage) error {
	v, ref, refs, err := t.inspect(in.Message())
	if err != nil {
		in.Release()
		return err
	}
	switch v {
	case swallow:
		in.Release()
		return nil
	case reject:
		in.Release()
		return t.sendException(ref)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		in.Release()
		return nil
	}
	if !t.mayPass(refs, t.held) {
		// Releasing held messages rescans them (quadratic in their
		// number), so the bound is small: held calls are within
		// MaxInFlight anyway, and an honest peer holds few others.
		// Each may be MaxMessageSize, so their bytes are bounded too.
		b := t.budget()
		var size uint64
		if _, isCall := questionOf(in.Message()); !isCall {
			size = sizeOf(in.Message())
		}
		switch {
		case len(t.held) >= maxHeld(b):
			in.Release()
			return fmt.Errorf("%w: %d messages wait for answers that have not returned", ErrLimit, len(t.held))
		case t.heldSize+size > b.MaxInFlightBytes:
			in.Release()
			return fmt.Errorf("%w: %d bytes of messages wait for answers that have not returned, and this one is %d; the limit is %d", ErrLimit, t.heldSize, size, b.MaxInFlightBytes)
		}
		t.heldSize += size
		t.held = append(t.held, &heldMessage{in: in, refs: refs, size: size})
		return nil
	}
	t.pass(in)
	return nil
}

// pass makes in ready for rpc.Conn. A call or bootstrap it carries is from
// now on known to rpc.Conn. The caller holds mu.
func (t *Transport) pass(in transport.IncomingMessage) {
	if id, ok := questionOf(in.Message()); ok {
		if a, known := t.answers[id]; known && a.state&answerHeld != 0 {
			a.state &^= answerHeld
			t.answers[id] = a
		}
	}
	t.ready = append(t.ready, in)
	t.readyCond.Signal()
}

// mayPass reports whether a message naming refs may go to rpc.Conn now:
// every question it names is known to rpc.Conn and returned (or, for its
// Finish, known), and none of the messages in before, which stay held,
// names any of the same things. The caller holds mu.
func (t *Transport) mayPass(refs []ref, before []*heldMessage) bool {
	for _, r := range refs {
		for _, h := range before {
			if h.names(r) {
				return false
			}
		}
		if r.kind == refExport {
			continue
		}
		a, known := t.answers[r.id]
		switch {
		case !known:
			// rpc.Conn answers for questions it never heard of (or
			// already forgot) without queueing anything.
		case a.state&answerHeld != 0:
			return false
		case r.kind == refAnswer && a.state&answerReturned == 0:
			return false
		}
	}
	return true
}

func (h *heldMessage) names(r ref) bool {
	for _, hr := range h.refs {
		if hr.same(r) {
			return true
		}
	}
	return false
}

// releaseHeld passes every held message whose questions are now settled, in
// order, keeping behind each one that stays held everything that names a
// question it names. Passing a call can settle a Finish held behind it, so
// it repeats until nothing moves. The caller holds mu.
func (t *Transport) releaseHeld() {
	for moved := true; moved && !t.closed; {
		moved = false
		kept := t.held[:0]
		for _, h := range t.held {
			if t.mayPass(h.refs, kept) {
				t.heldSize -= h.size
				t.pass(h.in)
				moved = true
				continue
			}
			kept = append(kept, h)
		}
		clear(t.held[len(kept):])
		t.held = kept
	}
}

// questionOf returns the id of the question a call or bootstrap asks.
func questionOf(m rpccp.Message) (uint32, bool) {
	switch m.Which() {
	case rpccp.Message_Which_call:
		if c, err := m.Call(); err == nil {
			return c.QuestionId(), true
		}
	case rpccp.Message_Which_bootstrap:
		if b, err := m.Bootstrap(); err == nil {
			return b.QuestionId(), true
		}
	}
	return 0, false
}

// verdict is what the reader does with one inspected message.
type verdict int

const (
	deliver verdict = iota // hand it to rpc.Conn, now or once what it names is settled
	swallow                // drop it: it concerns a question rpc.Conn never saw
	reject                 // answer it with an exception ourselves
)

// refusal is the exception a rejected question gets.
type refusal struct {
	qid    uint32
	typ    rpccp.Exception_Type
	reason string
}

// inspect checks m against the limits and decides its fate. For reject it
// also returns what to answer; for deliver, the questions m names.
func (t *Transport) inspect(m rpccp.Message) (verdict, refusal, []ref, error) {
	var refs refCollector
	switch m.Which() {
	case rpccp.Message_Which_call:
		call, err := m.Call()
		if err != nil {
			return deliver, refusal{}, nil, nil // rpc.Conn reports malformed messages itself
		}
		if selfPipelined(call) {
			// rpc.Conn registers the answer before resolving the target,
			// finds the call's own answer without a pipeline caller and
			// dereferences nil in a library goroutine: the process dies
			// (found by FuzzGuardedConnSurvivesArbitraryBytes).
			return deliver, refusal{}, nil, fmt.Errorf("%w: call %d is pipelined onto its own answer", ErrProtocol, call.QuestionId())
		}
		if err := t.checkCall(call, &refs); err != nil {
			return deliver, refusal{}, nil, err
		}
		v, ref, err := t.admit(call.QuestionId(), sizeOf(m), refs.rejected)
		return v, ref, refs.refs, err

	case rpccp.Message_Which_bootstrap:
		b, err := m.Bootstrap()
		if err != nil {
			return deliver, refusal{}, nil, nil
		}
		v, ref, err := t.admit(b.QuestionId(), sizeOf(m), false)
		return v, ref, nil, err

	case rpccp.Message_Which_finish:
		fin, err := m.Finish()
		if err != nil {
			return deliver, refusal{}, nil, nil
		}
		id := fin.QuestionId()
		t.mu.Lock()
		_, ours := t.rejected[id]
		delete(t.rejected, id)
		t.mu.Unlock()
		if ours {
			return swallow, refusal{}, nil, nil
		}
		t.mu.Lock()
		_, known := t.answers[id]
		t.mu.Unlock()
		if known {
			t.exports.finished(id, fin.ReleaseResultCaps())
		}
		t.settle(id, answerFinished)
		return deliver, refusal{}, []ref{{kind: refFinish, id: id}}, nil

	case rpccp.Message_Which_return:
		ret, err := m.Return()
		if err != nil || ret.Which() != rpccp.Return_Which_results {
			return deliver, refusal{}, nil, nil
		}
		payload, err := ret.Results()
		if err != nil {
			return deliver, refusal{}, nil, nil
		}
		err = t.checkPayload(payload, &refs)
		return deliver, refusal{}, refs.refs, err

	case rpccp.Message_Which_resolve:
		res, err := m.Resolve()
		if err != nil || res.Which() != rpccp.Resolve_Which_cap {
			return deliver, refusal{}, nil, nil
		}
		desc, err := res.Cap()
		if err != nil {
			return deliver, refusal{}, nil, nil
		}
		switch desc.Which() {
		case rpccp.CapDescriptor_Which_receiverHosted, rpccp.CapDescriptor_Which_receiverAnswer:
			// rpc.Conn embargoes calls on a promise that resolves to one
			// of our own capabilities in an AnswerQueue, with the crash
			// described at the top of this file when that capability
			// cannot take them. No gadgetd client needs to export a
			// promise of the server's own objects back to it.
			return deliver, refusal{}, nil, fmt.Errorf("%w: resolving promise %d to a capability the server hosts is not supported", ErrProtocol, res.PromiseId())
		}
		return deliver, refusal{}, nil, nil

	case rpccp.Message_Which_disembargo:
		d, err := m.Disembargo()
		if err != nil {
			return deliver, refusal{}, nil, nil
		}
		target, err := d.Target()
		if err != nil {
			return deliver, refusal{}, nil, nil
		}
		err = t.checkTarget(target, &refs)
		return deliver, refusal{}, refs.refs, err

	case rpccp.Message_Which_unimplemented:
		// The peer echoes one of our messages back; rpc.Conn parses it, so
		// it gets the same bounds. It names our questions, not the peer's.
		echoed, err := m.Unimplemented()
		if err != nil {
			return deliver, refusal{}, nil, nil
		}
		if echoed.Which() == rpccp.Message_Which_call {
			if call, err := echoed.Call(); err == nil {
				return deliver, refusal{}, nil, t.checkCall(call, &refCollector{})
			}
		}
		return deliver, refusal{}, nil, nil

	case rpccp.Message_Which_release:
		rel, err := m.Release()
		if err != nil {
			return deliver, refusal{}, nil, nil
		}
		t.exports.released(rel.Id(), rel.ReferenceCount())
		return deliver, refusal{}, []ref{{kind: refExport, id: rel.Id()}}, nil

	case rpccp.Message_Which_abort:
		return deliver, refusal{}, nil, nil
	}
	// Anything else (level 3 messages, types from a newer protocol) rpc.Conn
	// would echo back as "unimplemented" by copying the whole message, and
	// that copy has no depth limit: a message whose pointers form a cycle
	// overflows the stack and kills the process (found by
	// FuzzGuardedConnSurvivesArbitraryBytes). gadgetd speaks level 1 only.
	return deliver, refusal{}, nil, fmt.Errorf("%w: unsupported message type %v", ErrProtocol, m.Which())
}

// sizeOf is the size of m's message, for MaxInFlightBytes.
func sizeOf(m rpccp.Message) uint64 {
	n, _ := m.Message().TotalSize()
	return n
}

// admit decides whether a new question from the peer, asked in a message
// of size bytes, may proceed.
func (t *Transport) admit(id uint32, size uint64, refsRejected bool) (verdict, refusal, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return swallow, refusal{}, nil // nothing may take from the shared budgets after Close
	}
	b := t.budget()
	ref := refusal{qid: id, typ: rpccp.Exception_Type_overloaded}
	switch {
	case refsRejected:
		ref.typ, ref.reason = rpccp.Exception_Type_failed, "pipelined onto a call that was refused"
	case t.running >= b.MaxInFlight || len(t.answers) >= t.lim.MaxOpenAnswers:
		ref.reason = fmt.Sprintf("connection overloaded: at most %d calls in flight and %d unfinished answers", b.MaxInFlight, t.lim.MaxOpenAnswers)
	case t.runBytes+t.unsent+size > b.MaxInFlightBytes:
		ref.reason = fmt.Sprintf("connection overloaded: %d bytes of calls in flight and %d of messages not yet written to it, and this one is %d; the limit is %d", t.runBytes, t.unsent, size, b.MaxInFlightBytes)
	default:
		if _, dup := t.answers[id]; dup {
			return deliver, refusal{}, fmt.Errorf("%w: question %d is already in use", ErrProtocol, id)
		}
		if ref.reason = takeShared(size, t.user, t.server); ref.reason != "" {
			break
		}
		t.answers[id] = answer{state: answerHeld, size: size, user: t.user}
		t.running++
		t.runBytes += size
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

// refCollector gathers the questions a message names while its parts are
// checked, and whether one of them is a question we rejected (rpc.Conn has
// never heard of it, so the message must be rejected too).
type refCollector struct {
	refs     []ref
	rejected bool
}

// checkCall bounds a call's target and parameters.
func (t *Transport) checkCall(call rpccp.Call, refs *refCollector) error {
	if target, err := call.Target(); err == nil {
		if err := t.checkTarget(target, refs); err != nil {
			return err
		}
	}
	params, err := call.Params()
	if err != nil {
		return nil
	}
	return t.checkPayload(params, refs)
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

func (t *Transport) checkTarget(target rpccp.MessageTarget, refs *refCollector) error {
	if target.Which() == rpccp.MessageTarget_Which_importedCap {
		refs.refs = append(refs.refs, ref{kind: refExport, id: target.ImportedCap()})
		return nil
	}
	if target.Which() != rpccp.MessageTarget_Which_promisedAnswer {
		return nil
	}
	pa, err := target.PromisedAnswer()
	if err != nil {
		return nil
	}
	return t.checkPromisedAnswer(pa, refs)
}

func (t *Transport) checkPromisedAnswer(pa rpccp.PromisedAnswer, refs *refCollector) error {
	if ops, err := pa.Transform(); err == nil && ops.Len() > t.lim.MaxPipelineOps {
		return fmt.Errorf("%w: pipeline path of %d steps is longer than the limit of %d", ErrLimit, ops.Len(), t.lim.MaxPipelineOps)
	}
	id := pa.QuestionId()
	t.mu.Lock()
	_, rejected := t.rejected[id]
	t.mu.Unlock()
	refs.rejected = refs.rejected || rejected
	refs.refs = append(refs.refs, ref{kind: refAnswer, id: id})
	return nil
}

func (t *Transport) checkPayload(p rpccp.Payload, refs *refCollector) error {
	if !p.HasCapTable() {
		return nil
	}
	caps, err := p.CapTable()
	if err != nil {
		return nil
	}
	if caps.Len() > t.lim.MaxCapTable {
		return fmt.Errorf("%w: capability table of %d entries is longer than the limit of %d", ErrLimit, caps.Len(), t.lim.MaxCapTable)
	}
	for i := 0; i < caps.Len(); i++ {
		d := caps.At(i)
		if d.Which() == rpccp.CapDescriptor_Which_receiverHosted {
			refs.refs = append(refs.refs, ref{kind: refExport, id: d.ReceiverHosted()})
			continue
		}
		if d.Which() != rpccp.CapDescriptor_Which_receiverAnswer {
			continue
		}
		pa, err := d.ReceiverAnswer()
		if err != nil {
			continue
		}
		if err := t.checkPromisedAnswer(pa, refs); err != nil {
			return err
		}
	}
	return nil
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

package rpcguard

// Design: Serve owns the accept loop of one listener (several listeners may
// share a Server); ServeConn takes connections accepted elsewhere into the
// same set. Each accepted connection gets an rpc.Conn over a guarded
// Transport and one goroutine that waits for it to end and gives its slot
// back. Close stops every listener, shuts every connection down and waits for
// those goroutines. mu guards the listener and connection sets. What is
// logged about peers that have not logged in goes through strangerLog, within
// a rate (strangerlog.go); what one connection makes rpc.Conn log, through
// its connLog (connlog.go). A full server evicts the oldest connection that
// has not logged in (evict.go).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"
	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"

	"github.com/gadgetd/gadgetd/internal/connlimit"
)

// DefaultMaxConns is the connection limit when none is configured.
const DefaultMaxConns = 4096

// Server serves a bootstrap capability on listeners, one rpc.Conn per
// accepted connection, within Limits and a bound on concurrent connections.
type Server struct {
	bootstrap   Bootstrap
	lim         Limits
	maxConns    int
	logger      *slog.Logger
	strangerLog *rateLog // lines about peers that have not authenticated

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[*rpc.Conn]struct{}

	recv      *recvBudget // bytes of messages arriving on all connections (codec.go)
	inFlight  *inFlight   // calls in flight on all connections (budget.go)
	usersMu   sync.Mutex  // not mu: a login joins its user's budget from inside start
	users     map[string]*inFlight
	strangers *strangerSet   // connections not yet authenticated (evict.go)
	wg        sync.WaitGroup // one per live connection
}

// Bootstrap returns the capability a new connection bootstraps. It is the
// connection's own: rpc.Conn releases it when the connection ends. peer is
// the server's handle on that connection, for capabilities that must know
// (a login lifts the connection's budget with peer.Authenticated).
type Bootstrap func(peer *Peer) capnp.Client

// Peer is one connection, as its bootstrap capability sees it.
type Peer struct {
	t      *Transport
	remote net.Addr
}

// Authenticated lifts the connection from Limits.Unauthenticated to the full
// Limits: the peer has proved it is user. From then on its calls also count
// against the budget all of user's connections share (MaxUserInFlight), so
// user must name the account, the same on every connection. It fails when
// user has MaxUserConns connections logged in already; the connection then
// stays a stranger, and the login should fail with the error.
// A nil Peer (an in-process caller) has nothing to lift.
func (p *Peer) Authenticated(user string) error {
	if p == nil {
		return nil
	}
	return p.t.Authenticated(user)
}

// End ends the connection: the peer is told err in an Abort, and the
// connection closes. It does not wait.
func (p *Peer) End(err error) {
	if p != nil {
		p.t.abort(err)
	}
}

// RemoteAddr is the peer's network address.
func (p *Peer) RemoteAddr() net.Addr { return p.remote }

// NewServer returns a Server that gives each connection the capability
// bootstrap returns for it. maxConns <= 0 means DefaultMaxConns; logger may
// be nil.
func NewServer(bootstrap Bootstrap, maxConns int, lim Limits, logger *slog.Logger) *Server {
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	lim = lim.withDefaults()
	return &Server{
		bootstrap:   bootstrap,
		lim:         lim,
		recv:        newServerRecv(lim.MaxReceiving),
		inFlight:    newInFlight("server", lim.MaxServerInFlight, lim.MaxServerInFlightBytes),
		users:       make(map[string]*inFlight),
		maxConns:    maxConns,
		logger:      logger,
		strangerLog: newStrangerLog(logger, lim.Unauthenticated),
		listeners:   make(map[net.Listener]struct{}),
		conns:       make(map[*rpc.Conn]struct{}),
		strangers:   newStrangerSet(lim.Unauthenticated.MaxPerAddress),
	}
}

// Serve accepts connections on ln until ln or the Server is closed. It
// returns nil after Close and the accept error otherwise.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosed() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Running out of file descriptors is transient: wait, don't spin.
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.logger.Warn("capnp accept failed; retrying", "err", err, "in", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		s.start(nc, s.bootstrap) // a refusal is logged, within the strangers' rate
	}
}

// ServeConn serves bootstrap on nc, a connection accepted elsewhere (an
// HTTP server's websocket, say), exactly as Serve serves an accepted one:
// within the same Limits, budgets and connection limit, shared with every
// other connection of s. nc may be a MessageConn. It returns at once; s
// owns nc from then on, and closes it when the connection ends or s
// closes. A bootstrap may call Peer.Authenticated at once, for a
// connection whose peer proved who it is before it connected. When the
// Server refuses nc (it is closed, full, or nc's address has too many
// connections that have not logged in), ServeConn closes nc, does not call
// bootstrap, and says why: whatever the caller prepared for nc is still
// its own to release.
func (s *Server) ServeConn(nc net.Conn, bootstrap Bootstrap) error {
	return s.start(nc, bootstrap)
}

// serverBusy is what a peer refused for want of room is told.
const serverBusy = "server busy: it serves its maximum number of connections; try again later"

// HasRoomFor says why a connection logged in as user would be refused now,
// or returns nil: s is closed, full of connections that have all logged
// in, or user has Limits.MaxUserConns already. It is advice for a caller
// about to spend work on such a connection (opening a gadget's session for
// it, say); the connection is checked again when it arrives. Its errors
// wrap ErrLimit, or are net.ErrClosed.
func (s *Server) HasRoomFor(user string) error {
	s.mu.Lock()
	closed, full := s.closed, len(s.conns) >= s.maxConns
	s.mu.Unlock()
	switch {
	case closed:
		return net.ErrClosed
	case full && !s.strangers.any():
		return fmt.Errorf("%w: %s", ErrLimit, serverBusy)
	}
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	if b := s.users[user]; b != nil && b.conns >= s.lim.MaxUserConns {
		return userFull(user, b.conns)
	}
	return nil
}

// LogStranger logs a line about a peer that has not logged in (a refused
// credential it presented some other way, say) within the rate of the
// Server's own such lines (Budget.LogRate).
func (s *Server) LogStranger(level slog.Level, msg string, args ...any) {
	s.strangerLog.log(level, msg, args...)
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// start runs one connection, or closes it at once when the server is full
// and every connection has logged in: a refused peer learns immediately
// instead of hanging in the backlog. When some have not, the oldest of those
// makes room. It calls bootstrap only for a connection it serves, and says
// why it refused one.
func (s *Server) start(nc net.Conn, bootstrap Bootstrap) error {
	host := connlimit.Host(nc.RemoteAddr())
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return net.ErrClosed
	}
	st, ok := s.strangers.admit(host, nc.RemoteAddr())
	if !ok {
		s.mu.Unlock()
		s.strangerLog.log(slog.LevelWarn, "capnp connection refused: too many connections from one address that have not logged in", "remote", nc.RemoteAddr(), "limit", s.lim.Unauthenticated.MaxPerAddress)
		reason := fmt.Sprintf("too many connections from %s have not logged in yet (the limit is %d)", host, s.lim.Unauthenticated.MaxPerAddress)
		refuse(nc, reason)
		return fmt.Errorf("%w: %s", ErrLimit, reason)
	}
	if s.strangers.count() > s.lim.Unauthenticated.MaxConns {
		// Past it, strangers could fill MaxReceiving on their own, and
		// everyone's next large message would be refused.
		s.evictOldestStranger(fmt.Sprintf("the server has its maximum of %d connections that have not logged in", s.lim.Unauthenticated.MaxConns))
	}
	if len(s.conns) >= s.maxConns && !s.evictOldestStranger(fmt.Sprintf("the server is at its connection limit (%d)", s.maxConns)) {
		s.mu.Unlock()
		s.strangers.forget(st)
		s.strangerLog.log(slog.LevelWarn, "capnp connection refused: connection limit reached", "remote", nc.RemoteAddr(), "limit", s.maxConns)
		refuse(nc, serverBusy)
		return fmt.Errorf("%w: %s", ErrLimit, serverBusy)
	}
	welcome := func() { s.strangers.forget(st) }
	var (
		userName   string
		userBudget *inFlight // set once, by onAuth; read after the transport closed
	)
	t := NewTransport(nc, s.lim)
	t.onAuth = func(user string) (*inFlight, error) {
		b, err := s.joinUser(user)
		if err != nil {
			return nil, err
		}
		welcome()
		userName, userBudget = user, b
		return b, nil
	}
	t.server = s.inFlight
	t.codec.recv.Store(s.recv)
	conn := rpc.NewConn(t, &rpc.Options{
		BootstrapClient: bootstrap(&Peer{t: t, remote: nc.RemoteAddr()}),
		Logger:          newConnLog(t, nc.RemoteAddr().String(), s.logger, s.strangerLog),
	})
	s.conns[conn] = struct{}{}
	s.strangers.enqueue(st, conn, t)
	s.wg.Add(1)
	s.mu.Unlock()

	go func() {
		defer s.wg.Done()
		<-conn.Done() // after the transport closed
		t.endAuth()   // a login still running may not join after this
		welcome()
		if userBudget != nil {
			s.leaveUser(userName, userBudget)
		}
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
	}()
	return nil
}

// evictOldestStranger makes room for a new connection by ending the
// oldest one that has not logged in, and reports whether there was one;
// limit says which limit the server is at. The evicted connection stops
// counting at once; it is gone within rpc.Conn's abort timeout. s.mu is
// held.
func (s *Server) evictOldestStranger(limit string) bool {
	st := s.strangers.popOldest()
	if st == nil {
		return false
	}
	delete(s.conns, st.conn)
	st.t.abort(fmt.Errorf("%w: %s and this connection had not logged in; a newer one took its place", ErrLimit, limit))
	s.strangerLog.log(slog.LevelWarn, "capnp connection evicted: it had not logged in and a newer one took its place", "remote", st.remote, "why", limit)
	return true
}

// refuse tells a peer the server will not serve it, with an Abort it can
// show its user, and closes the connection.
func refuse(nc net.Conn, reason string) {
	defer nc.Close()
	msg, seg, err := capnp.NewMessage(capnp.SingleSegment(nil))
	if err != nil {
		return
	}
	m, err := rpccp.NewRootMessage(seg)
	if err != nil {
		return
	}
	ex, err := m.NewAbort()
	if err != nil {
		return
	}
	ex.SetType(rpccp.Exception_Type_overloaded)
	if ex.SetReason(reason) != nil {
		return
	}
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	encode(nc, capnp.NewEncoder(nc), msg)
}

// ConnCount reports how many connections are open.
func (s *Server) ConnCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops accepting, closes every connection, waits until they are gone
// or ctx ends.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for ln := range s.listeners {
		ln.Close()
	}
	conns := make([]*rpc.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()

	for _, c := range conns {
		go c.Close() // Close blocks on the peer for up to the abort timeout
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	defer s.strangerLog.close() // after the last connection's lines, if it could wait for them
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

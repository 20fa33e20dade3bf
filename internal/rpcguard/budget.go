package rpcguard

// Design: an inFlight budget bounds calls in flight, and the bytes of the
// messages that carried them, across connections: a Server has one for all
// its connections, and one for each user that has connections logged in.
// A Transport takes from its budgets when it admits a call (under its own
// mu, then the budget's mu: budgets never call out, so the order cannot
// deadlock) and gives back when the call's Return has been written, or when
// the connection closes with the call unanswered. The per-connection bounds
// alone let one user with many connections, or many users, make the server
// hold gigabytes; these make the totals bounded whatever the connections.
// A user's budget also carries its share of the server's budget of
// messages still arriving (recvBudget, codec.go), which the connections'
// readers take from as bytes arrive, without mu.
//
// User budgets live in Server.users while a connection of the user is open,
// and after, until the user's log rate limit has rested: a connection joins
// its user's budget on login and leaves it once its transport is closed
// (which has given back all it took); the last to leave deletes it, unless
// the user's log is still drained.

import (
	"fmt"
	"sync"
	"time"
)

// inFlight is a budget of calls and their bytes shared by connections. A
// nil *inFlight is no budget: taking from it always succeeds.
type inFlight struct {
	who      string // whose budget it is, for the refusal: "user alice", "server"
	maxCalls int
	maxBytes uint64

	mu     sync.Mutex
	calls  int
	bytes  uint64
	unsent uint64   // bytes of messages for these connections not yet written (sendqueue.go)
	conns  int      // connections charging it; for user budgets, guarded by Server.usersMu
	log    *rateLog // lines about a user's connections; nil for the server's budget

	// receiving is a user's share of the server's budget of messages still
	// arriving (codec.go); nil for the server's budget.
	receiving *recvBudget
}

func newInFlight(who string, maxCalls int, maxBytes uint64) *inFlight {
	return &inFlight{who: who, maxCalls: maxCalls, maxBytes: maxBytes}
}

// take counts one more call of size bytes, or says why it may not run.
func (b *inFlight) take(size uint64) (refused string) {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.calls >= b.maxCalls:
		return fmt.Sprintf("%s overloaded: at most %d calls in flight on all its connections", b.who, b.maxCalls)
	case b.bytes+b.unsent+size > b.maxBytes:
		return fmt.Sprintf("%s overloaded: %d bytes of calls in flight and %d of answers not yet written on all its connections, and this one is %d; the limit is %d", b.who, b.bytes, b.unsent, size, b.maxBytes)
	}
	b.calls++
	b.bytes += size
	return ""
}

// give returns what take counted for one call of size bytes.
func (b *inFlight) give(size uint64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls--
	b.bytes -= size
}

// addUnsent counts n more (or, negative, fewer) bytes waiting to be written.
func (b *inFlight) addUnsent(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.unsent = uint64(int64(b.unsent) + n)
}

// takeShared takes one call of size bytes from user, then server, or from
// neither and says why.
func takeShared(size uint64, user, server *inFlight) (refused string) {
	if refused = user.take(size); refused != "" {
		return refused
	}
	if refused = server.take(size); refused != "" {
		user.give(size)
	}
	return refused
}

// joinUser returns the budget of user, counting one more connection on it,
// or fails if user has MaxUserConns connections already.
func (s *Server) joinUser(user string) (*inFlight, error) {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	b := s.users[user]
	if b == nil {
		b = newInFlight(fmt.Sprintf("user %q", user), s.lim.MaxUserInFlight, s.lim.MaxUserInFlightBytes)
		b.log = newUserLog(s.logger, user)
		b.receiving = newUserRecv(user, s.lim.MaxUserReceiving, s.recv)
		s.users[user] = b
	}
	if b.conns >= s.lim.MaxUserConns {
		return nil, userFull(user, b.conns)
	}
	b.conns++
	return b, nil
}

// userFull is the error for a connection of user, who has conns already.
func userFull(user string, conns int) error {
	return fmt.Errorf("%w: user %q has %d connections logged in, the most one user may have; close one first", ErrLimit, user, conns)
}

// leaveUser counts one connection fewer on user's budget b. After the last,
// it forgets b once b's log has rested (rateLog.rested): a user who connects
// again starts afresh and loses nothing. A user whose log is still drained
// keeps b, so that closing connections and opening new ones does not refill
// it; b goes at that user's next last leave. The connection's transport
// must have closed: it gave back everything it took.
func (s *Server) leaveUser(user string, b *inFlight) {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	if b.conns--; b.conns == 0 && s.users[user] == b && b.log.rested(time.Now()) {
		delete(s.users, user)
		b.log.close()
	}
}

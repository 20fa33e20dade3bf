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
//
// User budgets live in Server.users while a connection of the user is open:
// a connection joins its user's budget on login and leaves it once its
// transport is closed (which has given back all it took), and the last one
// out deletes it.

import (
	"fmt"
	"sync"
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
	unsent uint64 // bytes of messages for these connections not yet written (sendqueue.go)
	conns  int    // connections charging it; for user budgets, guarded by Server.usersMu
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

// joinUser returns the budget of user, counting one more connection on it.
func (s *Server) joinUser(user string) *inFlight {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	b := s.users[user]
	if b == nil {
		b = newInFlight(fmt.Sprintf("user %q", user), s.lim.MaxUserInFlight, s.lim.MaxUserInFlightBytes)
		s.users[user] = b
	}
	b.conns++
	return b
}

// leaveUser counts one connection fewer on user's budget b, forgetting it
// after the last. The connection's transport must have closed: it gave back
// everything it took.
func (s *Server) leaveUser(user string, b *inFlight) {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	if b.conns--; b.conns == 0 && s.users[user] == b {
		delete(s.users, user)
	}
}

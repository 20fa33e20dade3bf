package rpcguard

// Design: strangerSet counts a Server's connections that have not logged in
// (strangers), per host for Budget.MaxPerAddress and in all for
// Budget.MaxConns, and keeps them in the order they arrived, so that a full
// server, or one with as many strangers as it allows, can make room for a
// newcomer by evicting the oldest stranger: connections that never log in then hold
// slots only until newer ones arrive, not for the whole login deadline.
// Connections that have logged in are never evicted. mu guards the counts,
// the order and each stranger's fields; the Server takes it with its own mu
// held (never the other way round), and a login takes it alone.

import (
	"container/list"
	"net"
	"sync"

	"capnproto.org/go/capnp/v3/rpc"
)

// strangerSet is the connections of a Server that have not logged in.
type strangerSet struct {
	maxPerHost int

	mu      sync.Mutex
	byHost  map[string]int
	counted int       // strangers counted in byHost, all hosts together
	order   list.List // of *stranger, oldest first; only those that may be evicted
}

// stranger is one connection in a strangerSet, until it logs in or ends.
type stranger struct {
	host    string
	remote  net.Addr
	counted bool          // it counts in byHost
	elem    *list.Element // its place in order, once enqueued; nil after
	conn    *rpc.Conn
	t       *Transport
}

func newStrangerSet(maxPerHost int) *strangerSet {
	return &strangerSet{maxPerHost: maxPerHost, byHost: make(map[string]int)}
}

// admit counts one more stranger, from remote, whose host is host, unless
// host already has its maximum.
func (s *strangerSet) admit(host string, remote net.Addr) (*stranger, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byHost[host] >= s.maxPerHost {
		return nil, false
	}
	s.byHost[host]++
	s.counted++
	return &stranger{host: host, remote: remote, counted: true}, true
}

// enqueue makes st, now served on conn over t, the newest one to evict.
func (s *strangerSet) enqueue(st *stranger, conn *rpc.Conn, t *Transport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.counted { // it may have logged in already, from inside start
		st.conn, st.t = conn, t
		st.elem = s.order.PushBack(st)
	}
}

// forget stops counting st: it logged in, was evicted, or ended. Calling it
// again does nothing.
func (s *strangerSet) forget(st *stranger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(st)
}

func (s *strangerSet) forgetLocked(st *stranger) {
	if st.elem != nil {
		s.order.Remove(st.elem)
		st.elem = nil
	}
	if st.counted {
		st.counted = false
		s.counted--
		if s.byHost[st.host]--; s.byHost[st.host] == 0 {
			delete(s.byHost, st.host)
		}
	}
}

// count returns how many strangers are counted, those not yet enqueued
// included.
func (s *strangerSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counted
}

// any reports whether there is a stranger to evict.
func (s *strangerSet) any() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len() != 0
}

// popOldest forgets the oldest stranger and returns it, or nil if there is
// none.
func (s *strangerSet) popOldest() *stranger {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.order.Front()
	if e == nil {
		return nil
	}
	st := e.Value.(*stranger)
	s.forgetLocked(st)
	return st
}

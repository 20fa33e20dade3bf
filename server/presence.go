package server

// Design: presence (SessionContext.present) is a registry of the sessions
// open now, per gadget, kept by the sessions themselves. gadgetCap.session,
// the one way a session is opened (Gadget.open, a frame ticket's websocket,
// Gateway.restore of a saved session), enters one before it asks the guest,
// so a guest asking during open finds its own caller, and attaches the
// guarded session it hands out, whose Shutdown leaves. go-capnp runs
// Shutdown once, when the last reference anywhere is gone: the client's
// release, its connection's end, the frame's websocket closing. A failed
// open leaves at once. So the registry holds the live sessions and nothing
// else; a gadget's map goes with its last session.
//
// A revoked or expired session stays entered while its holder still holds
// the capability, but no answer counts it: present checks every entry's
// credential and share as the session's own calls do, and leaves out those
// that fail as disconnected. The same registry lets a revocation end the
// sessions it cut off at once (endRevoked), rather than at their next call.
//
// Locking: presence.mu guards the map, the sequence and each entry's guard,
// and is held only to enter, attach, leave or copy entries: never while
// checking an entry (which may read the store) or calling anything. An
// entry's other fields never change after enter.

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/store"
)

// presence is the sessions open now, per gadget. The zero value is ready.
type presence struct {
	mu      sync.Mutex
	began   uint64                                  // entries entered so far: orders them
	gadgets map[string]map[*presentSession]struct{} // by gadget id; no empty map
}

// presentSession is one open session.
type presentSession struct {
	p        *presence
	gadgetID string
	user     store.User
	role     store.Role // the session's, as Guest.open is told
	began    uint64
	cred     *credential // the session's guards (nil: none)
	share    *shareCheck
	guard    *guardedSession // the session handed out, once attached
}

// present is one user with a session open, as SessionContext.present
// answers: their highest role among their valid sessions.
type present struct {
	user store.User
	role store.Role
}

// enter registers a session of g opened at role and guarded by g's
// credential and share; hold or leave it.
func (p *presence) enter(g *gadgetCap, role store.Role, share *shareCheck) *presentSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.began++
	ps := &presentSession{p: p, gadgetID: g.id, user: g.user, role: role, began: p.began, cred: g.cred, share: share}
	sessions := p.gadgets[g.id]
	if sessions == nil {
		if p.gadgets == nil {
			p.gadgets = map[string]map[*presentSession]struct{}{}
		}
		sessions = map[*presentSession]struct{}{}
		p.gadgets[g.id] = sessions
	}
	sessions[ps] = struct{}{}
	return ps
}

// leave unregisters ps.
func (ps *presentSession) leave() {
	p := ps.p
	p.mu.Lock()
	defer p.mu.Unlock()
	sessions := p.gadgets[ps.gadgetID]
	delete(sessions, ps)
	if len(sessions) == 0 {
		delete(p.gadgets, ps.gadgetID)
	}
}

// attach records gs as the session ps stands for; gs leaves ps when its
// last reference is gone.
func (ps *presentSession) attach(gs *guardedSession) {
	ps.p.mu.Lock()
	defer ps.p.mu.Unlock()
	ps.guard = gs
	gs.entry = ps
}

// endRevoked ends every session a revocation could have cut off whose
// guard now fails for good, as the revocation returns: everything that
// crossed it is released, and a frame's websocket closes with the reason.
// The sessions are those of gadget gadgetID, or those opened with the
// login or saved token whose public id is credID; so a revocation checks
// only what it could have cut, however many sessions others hold.
func (p *presence) endRevoked(ctx context.Context, gadgetID, credID string) {
	p.mu.Lock()
	var guards []*guardedSession
	for id, sessions := range p.gadgets {
		if gadgetID != "" && id != gadgetID {
			continue
		}
		for ps := range sessions {
			if ps.guard != nil && (credID == "" || ps.cred != nil && ps.cred.id == credID) {
				guards = append(guards, ps.guard)
			}
		}
	}
	p.mu.Unlock()
	for _, gs := range guards {
		if err := gs.access(ctx); capnp.IsDisconnected(err) {
			gs.end(err)
		}
	}
}

// of returns the users with a valid session of gadget gadgetID open, in
// the order their oldest valid session began.
func (p *presence) of(ctx context.Context, gadgetID string) ([]present, error) {
	p.mu.Lock()
	sessions := make([]*presentSession, 0, len(p.gadgets[gadgetID]))
	for ps := range p.gadgets[gadgetID] {
		sessions = append(sessions, ps)
	}
	p.mu.Unlock()
	slices.SortFunc(sessions, func(a, b *presentSession) int { return cmp.Compare(a.began, b.began) })

	var people []present
	index := map[string]int{} // user id → position in people
	for _, ps := range sessions {
		err := ps.cred.check(ctx)
		if err == nil {
			err = ps.share.check(ctx)
		}
		switch {
		case capnp.IsDisconnected(err):
			continue // revoked or expired: gone, whether released yet or not
		case err != nil:
			return nil, err
		}
		if i, ok := index[ps.user.ID]; ok {
			people[i].role = max(people[i].role, ps.role)
			continue
		}
		index[ps.user.ID] = len(people)
		people = append(people, present{user: ps.user, role: ps.role})
	}
	return people, nil
}

package server

// Design: a frame ticket lets the browser shell give one gadget's sandboxed
// frame a websocket of its own to that gadget's session, without handing
// the frame the user's token or anything else the shell holds. Gadget.
// frameTicket issues one; ServeFrameConn redeems it once, before the
// websocket upgrade, and serves the session opened for it as the
// connection's only bootstrap. Tickets live in memory only: a restart
// forgets them, which costs a frame a reconnect through its shell.
//
// frameTickets holds the tickets not yet redeemed or expired, under mu: by
// the SHA-256 of their secret, in issue order (which, with one lifetime for
// all, is expiry order, so pruning takes expired ones off the front), and
// counted per user for the per-user bound. A ticket carries the credential
// it was issued under, so redemption checks the token as every call does,
// and the session it opens is guarded by that credential like any other.
//
// A frame's websocket carries its one session, so it ends once the gadget
// finds that session's guard failed (its token, or the share it was opened
// through, revoked) as it calls a capability the frame passed it
// (membrane.go): a frame that only listens would otherwise look connected
// and hear nothing. The frame is told why in the connection's Abort, and a
// new ticket is refused. A call the frame makes itself is refused, saying
// why, and leaves the connection be: ending it would drop that answer
// (go-capnp discards unsent messages as it aborts). The frameLink is made
// before the session is opened and told the connection once it is served:
// a failure between the two ends the connection as it is attached.

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"sync"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/schema"
)

// Defaults of the frame ticket bounds; WithFrameTickets sets them.
const (
	DefaultFrameTicketTTL         = time.Minute
	DefaultMaxFrameTicketsPerUser = 64
)

// WithFrameTickets sets how long a frame ticket is valid and how many
// unredeemed, unexpired tickets one user may hold. Zero keeps a default.
func WithFrameTickets(ttl time.Duration, perUser int) Option {
	return func(c *config) {
		c.frameTicketTTL = positiveOr(ttl, c.frameTicketTTL)
		c.maxFrameTicketsPerUser = positiveOr(perUser, c.maxFrameTicketsPerUser)
	}
}

// ticketRefused is a refused redemption: a permission error (it is
// fs.ErrPermission), which the HTTP side answers with 403.
type ticketRefused struct{ reason string }

func (e ticketRefused) Error() string        { return "frame ticket refused: " + e.reason }
func (e ticketRefused) Is(target error) bool { return target == fs.ErrPermission }

// frameTicket is one issued ticket: for a session of the gadget of g,
// opened as g's user with g's role, under g's credential.
type frameTicket struct {
	hash    [sha256.Size]byte
	g       *gadgetCap
	expires time.Time
	elem    *list.Element // its place in frameTickets.order
}

// frameTickets is the tickets a Server has issued and not yet redeemed or
// forgotten. Safe for concurrent use.
type frameTickets struct {
	ttl     time.Duration
	perUser int

	mu     sync.Mutex
	byHash map[[sha256.Size]byte]*frameTicket
	order  list.List // of *frameTicket, oldest first
	count  map[string]int
}

func newFrameTickets(ttl time.Duration, perUser int) *frameTickets {
	return &frameTickets{ttl: ttl, perUser: perUser, byHash: make(map[[sha256.Size]byte]*frameTicket), count: make(map[string]int)}
}

// issue makes a ticket for a session of g and returns its secret: 128
// random bits, base64url.
func (ft *frameTickets) issue(g *gadgetCap) (secret string, expires time.Time, err error) {
	var b [16]byte
	rand.Read(b[:]) // never fails
	secret = base64.RawURLEncoding.EncodeToString(b[:])
	now := time.Now()
	t := &frameTicket{hash: sha256.Sum256([]byte(secret)), g: g, expires: now.Add(ft.ttl)}

	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.prune(now)
	user := g.user.ID
	if ft.count[user] >= ft.perUser {
		return "", time.Time{}, fmt.Errorf("frame tickets: you hold %d unused ones, the most allowed; use them or wait up to %v for them to expire", ft.perUser, ft.ttl)
	}
	ft.count[user]++
	t.elem = ft.order.PushBack(t)
	ft.byHash[t.hash] = t
	return secret, t.expires, nil
}

// redeem takes the ticket whose secret is secret out, so it cannot be
// used again.
func (ft *frameTickets) redeem(secret string) (*frameTicket, error) {
	now := time.Now()
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.prune(now)
	t := ft.byHash[sha256.Sum256([]byte(secret))]
	if t == nil {
		return nil, ticketRefused{"it is unknown, already used, or expired; the page must ask for a new one"}
	}
	ft.remove(t)
	return t, nil
}

// prune forgets the tickets that expired by now. ft.mu is held.
func (ft *frameTickets) prune(now time.Time) {
	for e := ft.order.Front(); e != nil; e = ft.order.Front() {
		t := e.Value.(*frameTicket)
		if now.Before(t.expires) {
			return
		}
		ft.remove(t)
	}
}

// remove forgets t. ft.mu is held.
func (ft *frameTickets) remove(t *frameTicket) {
	ft.order.Remove(t.elem)
	delete(ft.byHash, t.hash)
	user := t.g.user.ID
	if ft.count[user]--; ft.count[user] == 0 {
		delete(ft.count, user)
	}
}

// FrameTicket issues a ticket for a websocket to a session of this gadget,
// as this user with this role, under the token this capability was
// obtained with (which its guard has just checked).
func (g *gadgetCap) FrameTicket(ctx context.Context, call schema.Gadget_frameTicket) error {
	if err := refuseGuest(ctx, "frameTicket"); err != nil {
		return err
	}
	if _, err := g.record(ctx); err != nil {
		return err
	}
	secret, expires, err := g.s.frameTickets.issue(g)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetExpiresAt(expires.UnixMilli())
	return res.SetTicket(secret)
}

// ServeFrameConn redeems ticket, presented by the peer at remote, and if it
// is good opens the session it is for, exactly as Gadget.open would for the
// same user and role, calls upgrade for the connection, and serves that
// session on it as its only bootstrap capability, under the same guard as
// every connection; the connection counts as logged in as the ticket's
// user. The ticket is used up whatever happens next. An error returned
// before upgrade was called is a refusal to answer over HTTP: one that
// errors.Is fs.ErrPermission means the ticket was refused (unknown, used,
// expired, its token revoked, its gadget removed), and one that errors.Is
// rpcguard.ErrLimit that the server or the user has no room for another
// connection (both logged within the rate of lines about peers that have
// not logged in); any other, that the gadget could not open the session.
func (s *Server) ServeFrameConn(ctx context.Context, remote, ticket string, upgrade func() (net.Conn, error)) error {
	g, err := s.redeemFrameTicket(ctx, ticket)
	if err != nil {
		s.rpc.LogStranger(slog.LevelWarn, "websocket frame ticket refused", "remote", remote, "err", err)
		return err
	}
	// A connection the guard would refuse is refused before its session
	// costs the gadget an open.
	if err := s.rpc.HasRoomFor(g.user.ID); err != nil {
		s.rpc.LogStranger(slog.LevelWarn, "websocket frame refused", "remote", remote, "err", err)
		return err
	}
	link := new(frameLink)
	session, err := g.session(ctx, func() {}, link)
	if err != nil {
		return err
	}
	nc, err := upgrade()
	if err != nil {
		session.Release()
		return err
	}
	user := g.user.ID
	err = s.rpc.ServeConn(nc, func(peer *rpcguard.Peer) capnp.Client {
		// The ticket was issued to this user, logged in.
		if err := peer.Authenticated(user); err != nil {
			session.Release()
			return capnp.ErrorClient(err)
		}
		link.attach(peer)
		return session
	})
	if err != nil {
		session.Release() // refused, and told why over nc
	}
	return nil
}

// frameLink is the connection a frame's session is served on, to end
// once the session's guard fails.
type frameLink struct {
	mu   sync.Mutex
	peer *rpcguard.Peer // nil until attached
	lost error          // the guard's failure, once it failed
}

// attach gives l the connection, ending it at once if the session was lost
// already.
func (l *frameLink) attach(peer *rpcguard.Peer) {
	l.mu.Lock()
	l.peer = peer
	lost := l.lost
	l.mu.Unlock()
	if lost != nil {
		peer.End(lost)
	}
}

// sessionLost ends the connection with err, now or as it is attached. A
// nil link (a session not a frame's) does nothing.
func (l *frameLink) sessionLost(err error) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.lost == nil {
		l.lost = err
	}
	peer := l.peer
	l.mu.Unlock()
	if peer != nil {
		peer.End(err)
	}
}

// redeemFrameTicket uses ticket up and returns the gadget capability it
// was issued for, if its token and its gadget are still good.
func (s *Server) redeemFrameTicket(ctx context.Context, ticket string) (*gadgetCap, error) {
	t, err := s.frameTickets.redeem(ticket)
	if err != nil {
		return nil, err
	}
	if err := t.g.cred.check(ctx); err != nil {
		return nil, ticketRefused{err.Error()}
	}
	if _, err := t.g.record(ctx); err != nil {
		return nil, ticketRefused{err.Error()}
	}
	return t.g, nil
}

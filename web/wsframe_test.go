package web_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"

	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

// frameTicket asks gadget for a frame ticket.
func frameTicket(t testing.TB, gadget schema.Gadget) (ticket string, expiresAt time.Time) {
	t.Helper()
	f, release := gadget.FrameTicket(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("frameTicket: %v", err)
	}
	ticket, _ = res.Ticket()
	return ticket, time.UnixMilli(res.ExpiresAt())
}

// dialFrame opens /ws/frame with ticket and returns the capability it
// bootstraps, or the refusal's status and body.
func (h *wsHarness) dialFrame(t testing.TB, ticket string, header http.Header) (boot capnp.Client, status int, body string) {
	t.Helper()
	ws, resp, err := dialWS(t, h.url+"/ws/frame?ticket="+url.QueryEscape(ticket), header)
	if err != nil {
		if resp == nil {
			t.Fatalf("dialing /ws/frame: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return capnp.Client{}, resp.StatusCode, string(b)
	}
	return rpcOver(t, ws), http.StatusSwitchingProtocols, ""
}

// requireFrameRefused dials /ws/frame with ticket and requires a 403 whose
// body contains want.
func (h *wsHarness) requireFrameRefused(t testing.TB, ticket, want string) {
	t.Helper()
	_, status, body := h.dialFrame(t, ticket, nil)
	if status != http.StatusForbidden || !strings.Contains(body, want) {
		t.Fatalf("/ws/frame answered %d %q, want 403 with %q", status, body, want)
	}
}

func value(t testing.TB, c counterpb.Counter) int64 {
	t.Helper()
	f, release := c.Get(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	return res.Value()
}

func openCounter(t testing.TB, g schema.Gadget) counterpb.Counter {
	t.Helper()
	f, release := g.Open(testCtx(t), nil)
	t.Cleanup(release)
	return counterpb.Counter(f.Session())
}

// A frame ticket's websocket bootstraps that gadget's session and nothing
// else: it counts on that gadget, not on the user's other one, and the
// capability is no Gateway (a login on it is not implemented).
func TestAFrameTicketReachesItsOwnGadgetsSessionAndNothingElse(t *testing.T) {
	h := startWS(t, nil)
	ws := h.loginOverWS(t, h.token(t, "alice"))
	mine, _ := createCounter(t, ws)
	other, _ := createCounter(t, ws)
	ticket, _ := frameTicket(t, mine)

	boot, status, body := h.dialFrame(t, ticket, nil)
	if status != http.StatusSwitchingProtocols {
		t.Fatalf("/ws/frame with a fresh ticket answered %d %q", status, body)
	}
	frame := counterpb.Counter(boot)
	if got := increment(t, frame); got != 1 {
		t.Fatalf("increment through the frame = %d, want 1", got)
	}
	if got := value(t, openCounter(t, mine)); got != 1 {
		t.Fatalf("the ticket's gadget counts %d after the frame's increment, want 1", got)
	}
	if got := value(t, openCounter(t, other)); got != 0 {
		t.Fatalf("another gadget counts %d after the frame's increment, want 0", got)
	}
	f, release := schema.Gateway(boot).Login(testCtx(t), func(p schema.Gateway_login_Params) error { return p.SetToken("x") })
	defer release()
	if _, err := f.Struct(); err == nil || !strings.Contains(err.Error(), "unimplemented") {
		t.Fatalf("Gateway.login on a frame's bootstrap: %v, want unimplemented", err)
	}
}

func TestAFrameTicketCannotBeReplayed(t *testing.T) {
	h := startWS(t, nil)
	gadget, _ := createCounter(t, h.loginOverWS(t, h.token(t, "alice")))
	ticket, _ := frameTicket(t, gadget)
	if _, status, body := h.dialFrame(t, ticket, nil); status != http.StatusSwitchingProtocols {
		t.Fatalf("first use of a ticket answered %d %q", status, body)
	}
	h.requireFrameRefused(t, ticket, "unknown, already used, or expired")
}

func TestAFrameTicketCannotBeUsedOnceExpired(t *testing.T) {
	const ttl = 200 * time.Millisecond
	h := startWS(t, []server.Option{server.WithFrameTickets(ttl, 0)})
	gadget, _ := createCounter(t, h.loginOverWS(t, h.token(t, "alice")))
	ticket, expiresAt := frameTicket(t, gadget)
	if d := time.Until(expiresAt); d > ttl {
		t.Fatalf("a ticket with a lifetime of %v expires in %v", ttl, d)
	}
	time.Sleep(time.Until(expiresAt) + 10*time.Millisecond)
	h.requireFrameRefused(t, ticket, "unknown, already used, or expired")
}

// newToken mints a second token for ws's user and returns it with its id.
func newToken(t testing.TB, ws schema.Workspace) (token, id string) {
	t.Helper()
	f, release := ws.NewToken(testCtx(t), func(p schema.Workspace_newToken_Params) error { return p.SetLabel("frame test") })
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("newToken: %v", err)
	}
	token, _ = res.Token()
	info, _ := res.Info()
	id, _ = info.Id()
	return token, id
}

func revokeToken(t testing.TB, ws schema.Workspace, id string) {
	t.Helper()
	f, release := ws.RevokeToken(testCtx(t), func(p schema.Workspace_revokeToken_Params) error { return p.SetId(id) })
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Fatalf("revokeToken: %v", err)
	}
}

// abortReasons hears what a connection's peer said as it aborted it: an
// rpc.Logger, to which go-capnp reports a remote abort as an error.
type abortReasons chan string

func (a abortReasons) Error(msg string, _ ...any) {
	if strings.Contains(msg, "remote abort") {
		select {
		case a <- msg:
		default:
		}
	}
}

func (abortReasons) Debug(string, ...any) {}
func (abortReasons) Info(string, ...any)  {}
func (abortReasons) Warn(string, ...any)  {}

// A ticket is as good as the token it was issued under: revoked before
// the ticket is used, the ticket is refused; revoked after, the frame's
// websocket closes as the revocation returns, saying why in its Abort,
// and its session answers nothing more.
func TestAFrameTicketDiesWithItsToken(t *testing.T) {
	h := startWS(t, nil)
	admin := h.loginOverWS(t, h.token(t, "alice"))
	second, secondID := newToken(t, admin)
	ws := h.loginOverWS(t, second)
	gadget, _ := createCounter(t, ws)
	before, _ := frameTicket(t, gadget)
	live, _ := frameTicket(t, gadget)
	conn, _, err := dialWS(t, h.url+"/ws/frame?ticket="+url.QueryEscape(live), nil)
	if err != nil {
		t.Fatalf("dialing /ws/frame: %v", err)
	}
	reasons := make(abortReasons, 1)
	frame := counterpb.Counter(rpcOverWith(t, conn, &rpc.Options{Logger: reasons}))
	increment(t, frame)

	revokeToken(t, admin, secondID)
	select {
	case reason := <-reasons:
		if !strings.Contains(reason, "revoked") {
			t.Fatalf("the frame's websocket was aborted with %q, want the reason it was revoked", reason)
		}
	case <-testCtx(t).Done():
		t.Fatal("the frame's websocket is still open after its token was revoked")
	}
	h.requireFrameRefused(t, before, "revoked")
	f, release := frame.Increment(testCtx(t), nil)
	defer release()
	if _, err := f.Struct(); err == nil {
		t.Fatal("an increment through a frame whose token was revoked succeeded")
	}
}

func TestAFrameTicketOfARemovedGadgetIsRefused(t *testing.T) {
	h := startWS(t, nil)
	gadget, id := createCounter(t, h.loginOverWS(t, h.token(t, "alice")))
	ticket, _ := frameTicket(t, gadget)
	f, release := gadget.Remove(testCtx(t), nil)
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Fatalf("remove: %v", err)
	}
	h.requireFrameRefused(t, ticket, "unknown gadget id \""+id+"\"")
}

// A user holds a bounded number of unused tickets; a used one frees its
// place, and another user is not affected.
func TestAUserHoldsABoundedNumberOfFrameTickets(t *testing.T) {
	const bound = 3
	h := startWS(t, []server.Option{server.WithFrameTickets(0, bound)})
	gadget, _ := createCounter(t, h.loginOverWS(t, h.token(t, "alice")))
	var tickets []string
	for range bound {
		ticket, _ := frameTicket(t, gadget)
		tickets = append(tickets, ticket)
	}
	f, release := gadget.FrameTicket(testCtx(t), nil)
	defer release()
	if _, err := f.Struct(); err == nil || !strings.Contains(err.Error(), "the most allowed") {
		t.Fatalf("frame ticket %d of %d: %v, want a refusal naming the bound", bound+1, bound, err)
	}
	bob, _ := createCounter(t, h.loginOverWS(t, h.token(t, "bob")))
	frameTicket(t, bob)

	if _, status, body := h.dialFrame(t, tickets[0], nil); status != http.StatusSwitchingProtocols {
		t.Fatalf("/ws/frame answered %d %q", status, body)
	}
	frameTicket(t, gadget) // the used one's place
}

// A frame connection is logged in as the ticket's user: it outlives the
// login deadline that ends connections that never log in.
func TestAFrameConnectionCountsAsLoggedIn(t *testing.T) {
	const loginTimeout = 300 * time.Millisecond
	h := startWS(t, []server.Option{server.WithLoginLimits(server.LoginLimits{LoginTimeout: loginTimeout})})
	// In process, so that only the frame's connection has a deadline.
	gateway := h.srv.Gateway()
	defer gateway.Release()
	login, release := gateway.Login(testCtx(t), func(p schema.Gateway_login_Params) error { return p.SetToken(h.token(t, "alice")) })
	defer release()
	gadget, _ := createCounter(t, login.Workspace())
	ticket, _ := frameTicket(t, gadget)
	boot, status, body := h.dialFrame(t, ticket, nil)
	if status != http.StatusSwitchingProtocols {
		t.Fatalf("/ws/frame answered %d %q", status, body)
	}
	time.Sleep(2 * loginTimeout)
	if got := increment(t, counterpb.Counter(boot)); got != 1 {
		t.Fatalf("increment = %d, want 1", got)
	}
}

// syncBuffer is a log destination tests can read while the server writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A refused ticket is logged with the peer's address, but within the rate
// of lines about peers that have not logged in: a flood of bad tickets
// cannot fill the log.
func TestRefusedFrameTicketsAreLoggedWithinTheStrangersLogRate(t *testing.T) {
	var logs syncBuffer
	h := startWS(t, []server.Option{
		server.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		server.WithLoginLimits(server.LoginLimits{LogRate: 0.001, LogBurst: 2}),
	})
	for range 10 {
		h.requireFrameRefused(t, "not-a-ticket", "unknown, already used, or expired")
	}
	if n := strings.Count(logs.String(), "websocket frame ticket refused"); n != 2 {
		t.Fatalf("10 refused tickets logged %d lines, want the burst of 2:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "remote=127.0.0.1:") {
		t.Fatalf("the refusal's log line does not name the peer:\n%s", logs.String())
	}
}

// Expired tickets are forgotten, and free their places under the per-user
// bound without being used.
func TestExpiredFrameTicketsFreeTheirPlaces(t *testing.T) {
	const ttl = 200 * time.Millisecond
	h := startWS(t, []server.Option{server.WithFrameTickets(ttl, 2)})
	gadget, _ := createCounter(t, h.loginOverWS(t, h.token(t, "alice")))
	frameTicket(t, gadget)
	_, expiresAt := frameTicket(t, gadget)
	f, release := gadget.FrameTicket(testCtx(t), nil)
	defer release()
	if _, err := f.Struct(); err == nil {
		t.Fatal("a third ticket under a bound of 2 was issued")
	}
	time.Sleep(time.Until(expiresAt) + 10*time.Millisecond)
	frameTicket(t, gadget)
	frameTicket(t, gadget)
}

// TestFramesCountAgainstTheirUsersConnectionBound: a frame connection is
// one of its user's connections, so frame tickets, each redeemed at once,
// cannot take more than WithMaxConnectionsPerUser slots (an outside
// attacker held all 1024 this way, locking every other user out). A frame
// beyond the bound is refused before the upgrade, with 503, so it costs
// the gadget no session.
func TestFramesCountAgainstTheirUsersConnectionBound(t *testing.T) {
	h := startWS(t, []server.Option{server.WithMaxConnectionsPerUser(2)})
	// In process, so that only frames count.
	gateway := h.srv.Gateway()
	defer gateway.Release()
	login, release := gateway.Login(testCtx(t), func(p schema.Gateway_login_Params) error { return p.SetToken(h.token(t, "alice")) })
	defer release()
	gadget, _ := createCounter(t, login.Workspace())
	for i := range 2 {
		ticket, _ := frameTicket(t, gadget)
		boot, status, body := h.dialFrame(t, ticket, nil)
		if status != http.StatusSwitchingProtocols {
			t.Fatalf("/ws/frame answered %d %q", status, body)
		}
		// Served, so counted.
		if got := increment(t, counterpb.Counter(boot)); got != int64(i+1) {
			t.Fatalf("increment through frame %d = %d, want %d", i, got, i+1)
		}
	}
	ticket, _ := frameTicket(t, gadget)
	_, status, body := h.dialFrame(t, ticket, nil)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "has 2 connections logged in, the most one user may have") {
		t.Fatalf("a third frame of a user bounded to 2 connections: %d %q", status, body)
	}
	bob := h.loginOverWS(t, h.token(t, "bob"))
	createCounter(t, bob) // another user, while alice is at her bound
}

package server_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

// openSession opens gadget id of ws and returns its hostile session.
func openSession(t *testing.T, ws schema.Workspace, id string) schema.Storage {
	t.Helper()
	f, release := ws.Open(testCtx(t), func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	t.Cleanup(release)
	return openHostile(t, f.Gadget())
}

// hostileUser logs name in on conns connections, with a hostile gadget
// they all have a session of. The hostile blueprint must be a builtin:
// uploading it takes more calls in flight than these tests' budgets.
func installHostile(t *testing.T, h *harness) {
	b := hostileBundle(t)
	t.Helper()
	if _, err := h.srv.InstallBuiltin(testCtx(t), &b); err != nil {
		t.Fatal(err)
	}
}

func hostileUser(t *testing.T, h *harness, name string, conns int) (g schema.Gadget, id string, sessions []schema.Storage) {
	t.Helper()
	token := h.token(name)
	ws := h.login(t, token)
	g, id = create(t, ws, "hostile")
	for range conns {
		s := openSession(t, h.login(t, token), id)
		if _, err := command(testCtx(t), s, "ok"); err != nil { // resolved: later calls are not pipelined
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	return g, id, sessions
}

// loginOn logs token in on conn and returns its workspace.
func loginOn(t *testing.T, conn *client.Conn, token string) schema.Workspace {
	t.Helper()
	f, release := conn.Gateway().Login(testCtx(t), func(p schema.Gateway_login_Params) error { return p.SetToken(token) })
	t.Cleanup(release)
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	return res.Workspace()
}

// sendCommands sends n cmd commands on each session at once; their
// results come on the channel.
func sendCommands(ctx context.Context, sessions []schema.Storage, n int, cmd string) <-chan error {
	errs := make(chan error, len(sessions)*n)
	for _, s := range sessions {
		for range n {
			go func() {
				_, err := command(ctx, s, cmd)
				errs <- err
			}()
		}
	}
	return errs
}

// requireRefused waits for n results of errs, each an overloaded exception
// whose reason contains naming.
func requireRefused(t *testing.T, errs <-chan error, n int, naming string) {
	t.Helper()
	for i := range n {
		select {
		case err := <-errs:
			if exc.TypeOf(err) != exc.Overloaded || !strings.Contains(err.Error(), naming) {
				t.Fatalf("call %d past the budget returned %v, want an overloaded exception naming %q", i+1, err, naming)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d calls past the budget were refused", i, n)
		}
	}
}

// requireAnswered waits for n results of errs, each a success.
func requireAnswered(t *testing.T, errs <-chan error, n int) {
	t.Helper()
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("a call within the budget failed: %v", err)
		}
	}
}

// One logged-in user's connections share one budget of calls in flight
// (found F1: 20 connections of one user, each within its own bound, made
// the server hold 4-9 GB). Three connections with 4 calls each to a
// sleeping gadget, with a user budget of 6: 6 run, 6 are refused as
// overloaded naming the user; another user is served meanwhile; once the 6
// return, the user's connections work again.
func TestAUsersConnectionsTogetherStayWithinTheUsersInFlightBudget(t *testing.T) {
	const perUser, conns, perConn = 6, 3, 4
	h := start(t, t.TempDir(), server.WithMaxInFlightPerUser(perUser, 0))
	installHostile(t, h)
	ctx := testCtx(t)
	_, _, alice := hostileUser(t, h, "alice", conns)

	errs := sendCommands(ctx, alice, perConn, "sleep:300")
	requireRefused(t, errs, conns*perConn-perUser, "overloaded: at most 6 calls in flight on all its connections")
	h.requireServing(t, h.token("bob"))
	requireAnswered(t, errs, perUser)
	requireAnswered(t, sendCommands(ctx, alice, 1, "ok"), conns)
}

// All connections of all users share the server's budget of calls in
// flight: three users with 4 calls each to sleeping gadgets, with a server
// budget of 6: 6 run, 6 are refused as overloaded naming the server; once
// the 6 return every user is served again.
func TestAllUsersTogetherStayWithinTheServersInFlightBudget(t *testing.T) {
	const total, users, perUser = 6, 3, 4
	h := start(t, t.TempDir(), server.WithMaxInFlightTotal(total, 0))
	installHostile(t, h)
	ctx := testCtx(t)
	var sessions []schema.Storage
	for i := range users {
		_, _, s := hostileUser(t, h, fmt.Sprintf("user%d", i), 1)
		sessions = append(sessions, s...)
	}
	errs := sendCommands(ctx, sessions, perUser, "sleep:300")
	requireRefused(t, errs, users*perUser-total, "server overloaded")
	requireAnswered(t, errs, total)
	requireAnswered(t, sendCommands(ctx, sessions, 1, "ok"), users)
	h.requireServing(t, h.token("carol"))
}

// pausableConn is a client's connection that stops reading while paused
// and reads again once resumed.
type pausableConn struct {
	net.Conn
	paused, resumed chan struct{}
}

func (c *pausableConn) Read(p []byte) (int, error) {
	select {
	case <-c.paused:
		<-c.resumed
	default:
	}
	return c.Conn.Read(p)
}

// Answers waiting for a client that stopped reading keep their calls
// counted against its user until they are written (found F7: the
// per-connection backpressure let each such connection add ~420 MB, and
// connections added up). Alice's paused connection asks for four answers
// of 4.5 MiB, each more than the socket buffers take: the first write
// blocks and the other answers wait behind it. With a user budget of 5, at
// most one of two calls on her other connection may run. Counting a call
// only until its Return is handed to the transport would let both run (the
// one being written no longer counted), as would a budget per connection.
// Once the client reads again, every answer arrives whole and the budget
// comes back.
func TestAnswersAClientDoesNotReadKeepCountingAgainstItsUser(t *testing.T) {
	const perUser, answers = 5, 4
	h := start(t, t.TempDir(), server.WithMaxInFlightPerUser(perUser, 0))
	installHostile(t, h)
	ctx := testCtx(t)
	_, id, others := hostileUser(t, h, "alice", 1)

	nc, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	// The kernel takes under 4.5 MiB (4 MiB of send buffer at most, this
	// receive buffer) and the window still carries the answers fast once
	// the client reads again (4 KiB would not, within the 30 s write
	// timeout).
	nc.(*net.TCPConn).SetReadBuffer(256 << 10)
	pc := &pausableConn{Conn: nc, paused: make(chan struct{}), resumed: make(chan struct{})}
	conn := client.NewConn(pc)
	defer conn.Close()
	paused := openSession(t, loginOn(t, conn, h.token("alice")), id)
	if _, err := command(ctx, paused, "ok"); err != nil {
		t.Fatal(err)
	}

	close(pc.paused)
	results := make(chan error, answers)
	for range answers {
		go func() {
			v, err := command(ctx, paused, "huge:4718592")
			if err == nil && len(v) != 4718592 {
				err = fmt.Errorf("an answer of %d bytes, want 4718592", len(v))
			}
			results <- err
		}()
	}
	// Give the gadget time to compute the answers. Had it not, the calls
	// would count as running anyway: the test would prove less, never fail.
	time.Sleep(time.Second)

	for round := range 3 {
		// Both sent before either is awaited, and the first is slow: the
		// two are in flight together.
		first, release1 := others[0].Get(ctx, func(p schema.Storage_get_Params) error { return p.SetKey("sleep:100") })
		second, release2 := others[0].Get(ctx, func(p schema.Storage_get_Params) error { return p.SetKey("ok") })
		_, err1 := first.Struct()
		_, err2 := second.Struct()
		release1()
		release2()
		refused := 0
		for _, err := range []error{err1, err2} {
			switch {
			case exc.TypeOf(err) == exc.Overloaded && strings.Contains(err.Error(), "overloaded: at most 5 calls in flight on all its connections"):
				refused++
			case err != nil:
				t.Fatalf("round %d: a call failed: %v", round, err)
			}
		}
		if refused == 0 {
			t.Fatalf("round %d: both calls ran beside the four whose answers wait to be written; the user budget is 5", round)
		}
	}

	close(pc.resumed)
	for range answers {
		if err := <-results; err != nil {
			t.Fatalf("once the client read again: %v", err)
		}
	}
	// The budget comes back as each write returns, a moment after the
	// client has the answer.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		errs, failed := sendCommands(ctx, others, perUser, "ok"), error(nil)
		for range perUser {
			if err := <-errs; err != nil {
				failed = err
			}
		}
		if failed == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("once the answers were read, alice still cannot run %d calls: %v", perUser, failed)
		}
	}
	h.requireServing(t, h.token("bob"))
}

// The bytes of answers waiting for a client that stopped reading count
// against its user's byte budget until written (found F7: ~420 MB per
// such connection, adding up across connections). Alice's paused
// connection asks for a 6 MiB answer; with a user budget of 4 MiB, once it
// waits to be written (a message counts whole until its write returns) her
// other connection's calls are refused as overloaded, naming the unwritten
// answers. Before, the answer waited in rpc.Conn's send queue, which nothing
// weighed. Once the client reads again the answer arrives whole and the
// bytes are given back.
func TestAnswerBytesAClientDoesNotReadCountAgainstItsUser(t *testing.T) {
	h := start(t, t.TempDir(), server.WithMaxInFlightPerUser(0, 4<<20))
	installHostile(t, h)
	ctx := testCtx(t)
	_, id, others := hostileUser(t, h, "alice", 1)

	nc, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	nc.(*net.TCPConn).SetReadBuffer(256 << 10) // see TestAnswersAClientDoesNotReadKeepCountingAgainstItsUser
	pc := &pausableConn{Conn: nc, paused: make(chan struct{}), resumed: make(chan struct{})}
	conn := client.NewConn(pc)
	defer conn.Close()
	paused := openSession(t, loginOn(t, conn, h.token("alice")), id)
	if _, err := command(ctx, paused, "ok"); err != nil {
		t.Fatal(err)
	}
	close(pc.paused)
	result := make(chan error, 1)
	go func() {
		v, err := command(ctx, paused, "huge:6291456")
		if err == nil && len(v) != 6291456 {
			err = fmt.Errorf("an answer of %d bytes, want 6291456", len(v))
		}
		result <- err
	}()

	const refusal = "of answers not yet written on all its connections"
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := command(ctx, others[0], "ok")
		if exc.TypeOf(err) == exc.Overloaded && strings.Contains(err.Error(), refusal) {
			break
		}
		if err != nil {
			t.Fatalf("a call failed: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("alice's calls still run while a 6 MiB answer waits for her paused connection; her budget is 4 MiB")
		}
		time.Sleep(20 * time.Millisecond)
	}

	close(pc.resumed)
	if err := <-result; err != nil {
		t.Fatalf("once the client read again: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := command(ctx, others[0], "ok")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("once the answer was read, alice's calls are still refused: %v", err)
		}
	}
	h.requireServing(t, h.token("bob"))
}

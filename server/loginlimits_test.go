package server_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/server"
)

// TestLoginLimitsReachTheConnections proves WithLoginLimits bounds the
// connections that have not logged in: with MaxPerAddress 1, a second
// stranger from the same address is hung up on at once while the first
// stays open, and once the first has gone, the address can log in again.
// (The bounds themselves are proved in internal/rpcguard; this is the
// option's path to them.)
func TestLoginLimitsReachTheConnections(t *testing.T) {
	h := start(t, t.TempDir(), server.WithLoginLimits(server.LoginLimits{MaxPerAddress: 1}))
	token := h.token("alice")

	first, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	requireHangUp(t, second)

	first.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := first.Read(make([]byte, 1)); err == nil || !isTimeout(err) {
		t.Fatalf("the first stranger was not kept: %v", err)
	}
	first.Close()
	// The server learns of the close a moment later; until then the
	// address still has its one stranger, so retry.
	ctx := testCtx(t)
	for {
		conn, err := client.Dial(ctx, h.addr)
		if err != nil {
			t.Fatal(err)
		}
		ws, release := conn.Login(ctx, token)
		f, releaseGadgets := ws.Gadgets(ctx, nil)
		_, err = f.Struct()
		releaseGadgets()
		release()
		conn.Close()
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the address could not log in once its stranger had gone: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestAUsersLoginsPastItsConnectionBoundFail: with
// WithMaxConnectionsPerUser(2), a user's third connection cannot log in,
// and says why, while another user still can. (An outside attacker held
// all 1024 connections with one account and locked every other user out.)
func TestAUsersLoginsPastItsConnectionBoundFail(t *testing.T) {
	h := start(t, t.TempDir(), server.WithMaxConnectionsPerUser(2))
	alice, bob := h.token("alice"), h.token("bob")
	h.requireServing(t, alice)
	h.requireServing(t, alice)
	ws := h.loginPipelined(t, alice)
	f, release := ws.Gadgets(testCtx(t), nil)
	defer release()
	if _, err := f.Struct(); err == nil || !strings.Contains(err.Error(), "has 2 connections logged in, the most one user may have") {
		t.Fatalf("alice's third login: %v", err)
	}
	h.requireServing(t, bob)
}

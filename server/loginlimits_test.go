package server_test

import (
	"net"
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

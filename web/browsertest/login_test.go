package browsertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/wsclient"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

// TestABusyServerKeepsTheTokenAndOffersARetry: when the server refuses the
// shell's connection for want of room (it serves its maximum number of
// connections, all logged in), the login fails for a reason that is not
// the token: the shell says why, keeps the token and offers a retry, which
// logs in once there is room. Only the server's "invalid token" may make
// it forget the token (TestAWrongTokenShowsTheLoginFormWithTheServersReason).
func TestABusyServerKeepsTheTokenAndOffersARetry(t *testing.T) {
	RequireChromium(t)
	g := serveBlueprints(t, []*blueprint.Bundle{blueprinttest.Bundle(t, blueprinttest.TestCounter)}, server.WithMaxConnections(1))
	occupant := holdLoggedInConnection(t, g)
	tab := chromium{NewTab(t)}
	if err := tab.Navigate(g.url + "#token=" + g.token); err != nil {
		t.Fatal(err)
	}
	waitIn(t, tab, "the retry button", `[...document.querySelectorAll("main button")].some((b) => b.textContent === "Try again")`)
	var msg, token string
	if err := tab.Evaluate(`document.querySelector("main .error")?.textContent ?? ""`, &msg); err != nil || msg == "" {
		t.Errorf("the shell shows no reason (%q, %v)", msg, err)
	}
	t.Logf("the shell says: %s", msg)
	if err := tab.Evaluate(`sessionStorage.getItem("gadgetd.token") ?? ""`, &token); err != nil || token != g.token {
		t.Fatalf("the shell kept the token %q (%v) after a login the busy server refused, want it kept", token, err)
	}
	occupant.Close()
	click(t, tab, "main button")
	waitIn(t, tab, "the shell logged in after the retry", `document.querySelector("#create-blueprint option[value=counter]")`)
}

// holdLoggedInConnection logs alice in over a websocket of its own and
// keeps it open until the test ends or the caller closes it.
func holdLoggedInConnection(t *testing.T, g *gadgetd) *wsclient.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := wsclient.Dial(ctx, "ws"+strings.TrimPrefix(g.url, "http")+"ws")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	gw := schema.Gateway(conn.Bootstrap(ctx))
	defer gw.Release()
	login, release := gw.Login(ctx, func(p schema.Gateway_login_Params) error { return p.SetToken(g.token) })
	defer release()
	if _, err := login.Struct(); err != nil {
		t.Fatalf("logging in the occupying connection: %v", err)
	}
	return conn
}

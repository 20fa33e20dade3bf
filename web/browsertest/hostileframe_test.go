package browsertest

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
)

// garbageUI takes the port the shell hands its frame and sends the server
// bytes that are no Cap'n Proto message, each time: the server closes that
// frame socket at once.
const garbageUI = `<!doctype html>
<p>garbage</p>
<script>
addEventListener("message", (e) => {
  if (e.data && e.data.gadgetd === "port" && e.ports[0]) {
    e.ports[0].postMessage(new Uint8Array([0, 0, 0, 0, 255, 255, 255, 255, 1, 2, 3, 4]).buffer);
  }
});
</script>
`

// TestAFrameWhoseSocketIsClosedAtOnceIsReconnectedEverMoreSlowly: a hostile
// UI that gets each of its sockets closed at once (it sends the server
// garbage) makes the shell reconnect after growing pauses, not four times
// a second for good, which cost a ticket, a socket and a server log line
// each time (an outside attacker's finding). Within 6 s the pauses
// (250 ms, 1 s, 2 s, 5 s) allow at most 4 sockets; reconnecting at the
// first pause each time opened about 20.
func TestAFrameWhoseSocketIsClosedAtOnceIsReconnectedEverMoreSlowly(t *testing.T) {
	RequireChromium(t)
	hostile := *blueprinttest.Bundle(t, blueprinttest.TestCounter)
	hostile.Name, hostile.UIHTML = "garbage", garbageUI
	g := serveBlueprints(t, []*blueprint.Bundle{&hostile})
	tab := NewTab(t)
	if err := chromedp.Do(tab, func(ctx context.Context, tt *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tt, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
  window.frameSockets = 0;
  const Native = WebSocket;
  window.WebSocket = class extends Native {
    constructor(url, ...rest) { super(url, ...rest); if (String(url).includes("/ws/frame")) frameSockets++; }
  };`})
		return chromedp.Void{}, err
	}); err != nil {
		t.Fatal(err)
	}
	login(t, g, tab)
	if err := chromedp.Do(tab,
		chromedp.SetValue("#create-blueprint", "garbage"),
		chromedp.SendKeys("#create-name", "garbage"),
		chromedp.Click(`#create button[type=submit]`),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "the first frame socket", `frameSockets >= 1`)
	time.Sleep(6 * time.Second) // the window the pauses are counted in
	if n := eval[int](t, tab, `frameSockets`); n > 4 {
		t.Fatalf("the shell opened %d frame sockets in 6 s for a frame whose sockets close at once, want at most 4", n)
	}
}

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

// consoleLogFloodUI logs in a loop, 2000 lines a task, as a buggy gadget
// might: the console forwarder posts each line to the shell.
const consoleLogFloodUI = `<!doctype html>
<p>console.log flood</p>
<script>
let n = 0;
setTimeout(function burst() {
  for (let i = 0; i < 2000; i++) console.log("line " + (n++));
  setTimeout(burst, 0);
}, 0);
</script>
`

// consolePortFloodUI takes the console port the shell posts its frame (the
// forwarder takes it too), writes a line that looks like one of the
// shell's own, then posts entries of 200,000 characters on it, 25 a task
// (5 MB), as fast as it can, past any bound the forwarder could keep.
const consolePortFloodUI = `<!doctype html>
<p>console port flood</p>
<script>
addEventListener("message", (ev) => {
  if (ev.data?.gadgetd !== "console" || ev.ports.length !== 1) return;
  const port = ev.ports[0];
  port.postMessage({ level: "shell", text: "gadgetd 999 console messages dropped (forged)" });
  const big = "A".repeat(200000);
  setTimeout(function burst() {
    for (let i = 0; i < 25; i++) port.postMessage({ level: "log", text: big });
    setTimeout(burst, 0);
  }, 500);
});
</script>
`

// The shell's bounds on a frame's console panel (web/shell/shell.js).
const (
	consoleLines = 500
	// entryChars is the cut length, plus room for the level and the mark
	// that says how much was cut.
	entryChars = 2000 + 100
)

// responsive is how long the shell may take to answer a DOM query while a
// frame floods it: not a speed the test asks for, a bound that proves it
// did not hang (an unbounded console froze the tab, and every query timed
// out).
const responsive = 5 * time.Second

// floodTheShell serves a gadget whose UI is ui and a quiet one, opens the
// quiet one and then the flooding one, and checks that the shell goes on
// answering DOM queries within responsive while the flood runs, that its
// console panel stays within its bounds with a line of the shell's own
// saying what it dropped, and that a click on the quiet gadget opens it.
// It returns what the panel showed at each query during the flood.
func floodTheShell(t *testing.T, ui string) []panelState {
	RequireChromium(t)
	flood := *blueprinttest.Bundle(t, blueprinttest.TestCounter)
	flood.Name, flood.UIHTML = "flood", ui
	quiet := *blueprinttest.Bundle(t, blueprinttest.TestCounter)
	quiet.Name, quiet.UIHTML = "quiet", "<!doctype html><p>quiet</p>"
	g := serveBlueprints(t, []*blueprint.Bundle{&flood, &quiet})
	tab := NewTab(t)
	login(t, g, tab)
	createGadget(t, chromium{tab}, "quiet", "quiet")
	if _, err := chromedp.Run(tab, chromedp.Evaluate[any](`document.querySelector("#create-blueprint").value = "flood"; document.querySelector("#create-name").value = "flood"; document.querySelector("#create button[type=submit]").click()`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "the flooding gadget's console", `document.querySelector(".open-gadget h2")?.textContent === "flood" && document.querySelectorAll(".console li").length > 0`)

	const panel = `(() => {
  const lines = [...document.querySelectorAll(".console li")];
  return {
    lines: lines.length,
    longest: Math.max(0, ...lines.map((l) => l.textContent.length)),
    dropped: lines.filter((l) => l.classList.contains("shell") && /^gadgetd\d+ console messages? dropped/.test(l.textContent)).length,
    forgedAsFrames: lines.filter((l) => l.classList.contains("log") && l.textContent.includes("(forged)")).length,
    forgedAsShells: lines.filter((l) => !l.classList.contains("log") && l.textContent.includes("(forged)")).length,
    heapMB: Math.round((performance.memory?.usedJSHeapSize ?? 0) / 1e6),
  };
})()`
	var seen []panelState
	for i := 0; i < 16; i++ { // about 8 s of flood: 200 lines at once, and 50 a second, fill the 500
		time.Sleep(500 * time.Millisecond)
		ctx, cancel := context.WithTimeout(tab, responsive)
		state, err := chromedp.Run(ctx, chromedp.Evaluate[panelState](panel))
		cancel()
		if err != nil {
			t.Fatalf("query %d during the flood: the shell did not answer within %v (%v): the flood hung its tab", i, responsive, err)
		}
		if state.Lines > consoleLines || state.Longest > entryChars {
			t.Fatalf("query %d during the flood: the console panel has %d lines, the longest %d characters; want at most %d lines of at most %d", i, state.Lines, state.Longest, consoleLines, entryChars)
		}
		seen = append(seen, state)
	}
	if last := seen[len(seen)-1]; last.Dropped == 0 {
		t.Errorf("after 8 s of flood the console panel (%d lines) has no line of the shell's saying it dropped messages", last.Lines)
	} else {
		t.Logf("after 8 s of flood the console panel has %d lines, the longest %d characters, %d lines about dropped messages; the shell's JS heap %d MB", last.Lines, last.Longest, last.Dropped, last.HeapMB)
	}
	ctx, cancel := context.WithTimeout(tab, responsive)
	defer cancel()
	if err := chromedp.Do(ctx,
		chromedp.Click(`#gadget-list li button.open`, chromedp.NodeVisible), // the first gadget: quiet
		chromedp.WaitVisible(`.open-gadget[data-id] .gadget-head h2`),       // not the share dialog's, hidden until opened
	); err != nil {
		t.Fatalf("clicking the quiet gadget during the flood: no answer within %v (%v)", responsive, err)
	}
	waitFor(t, tab, "the quiet gadget open", `document.querySelector(".open-gadget h2")?.textContent === "quiet"`)
	return seen
}

// panelState is what a gadget's console panel shows: its lines, the
// longest one's length, the shell's lines about dropped messages, and the
// lines of consolePortFloodUI's forgery drawn as the frame's and as not,
// and the page's JS heap (for the log: not a bound the test asks for).
type panelState struct{ Lines, Longest, Dropped, ForgedAsFrames, ForgedAsShells, HeapMB int }

// TestAFrameLoggingInALoopLeavesTheShellResponsiveAndItsConsoleBounded: a
// UI that calls console.log in a loop (an outside attacker's finding: the
// shell drew and scrolled for each line, and its tab froze, its renderer
// grown from 138 MB to 488 MB in 10 s) leaves the shell answering, its
// console panel within 500 lines with a line of its own counting what it
// dropped.
func TestAFrameLoggingInALoopLeavesTheShellResponsiveAndItsConsoleBounded(t *testing.T) {
	floodTheShell(t, consoleLogFloodUI)
}

// TestAFramePostingHugeEntriesOnItsConsolePortLeavesTheShellResponsive: a
// UI that posts 200,000-character entries on the console port itself, past the
// forwarder (the attacker's 20 MB entries grew the renderer to 2.1 GB and
// froze the tab), leaves the shell answering and each line cut; a line it
// forges to look like the shell's is drawn as the frame's, not the shell's.
func TestAFramePostingHugeEntriesOnItsConsolePortLeavesTheShellResponsive(t *testing.T) {
	seen := floodTheShell(t, consolePortFloodUI)
	// The forged line is the frame's first; later ones push it out.
	if first := seen[0]; first.ForgedAsFrames != 1 || first.ForgedAsShells != 0 {
		t.Errorf("the frame's forged line of the shell's is drawn %d times as the frame's and %d as not, want once as the frame's", first.ForgedAsFrames, first.ForgedAsShells)
	}
	for i, state := range seen {
		if state.ForgedAsShells != 0 {
			t.Errorf("query %d: the frame's forged line is drawn as the shell's", i)
		}
	}
}

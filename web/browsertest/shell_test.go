package browsertest

// End-to-end tests of the shell: a real server (server.Open on a bbolt
// file in a temporary directory, the test counter installed) behind the
// real web.Handler on loopback, and a user in headless Chromium or Firefox
// (each flow is one function taking the browser, run by a test per browser).

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
	"github.com/gadgetd/gadgetd/web"
)

// compileCache is shared by every server the tests start, so that the test
// counter is compiled once.
var compileCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gadgetd-browsertest-cache-")
	if err != nil {
		panic(err)
	}
	compileCache = dir
	code := m.Run()
	blueprinttest.RemoveAll()
	os.RemoveAll(dir)
	os.Exit(code)
}

// counterUI is the test counter's UI for these tests: the counter's JS
// bindings as `gadgetd blueprint build` wrote them
// (internal/testcounter/counterpb/counter.capnp.js, which take capnp-es
// from the frame runtime), a +1 button at the frame's top left where the
// test clicks and a button beside it that makes the listener fail once, a
// watch whose listener (implemented in the frame, called from the gadget)
// shows every change, and a console line for every value it shows.
func counterUI(t testing.TB) string {
	t.Helper()
	bindings, err := os.ReadFile(filepath.Join(blueprinttest.RepoRoot(), "internal/testcounter/counterpb/counter.capnp.js"))
	if err != nil {
		t.Fatal(err)
	}
	return `<!doctype html><html><head><title>counter</title>
<style>body { margin: 0; font: 16px system-ui; } button { position: fixed; top: 0; width: 120px; height: 48px; } #inc { left: 0; } #fail { left: 160px; } output { display: block; margin: 64px 8px 0; }</style>
</head><body><button id="inc" type="button">+1</button><button id="fail" type="button">fail next</button><output id="value">…</output>
<script>` + string(bindings) + `</script>
<script>
  const { Counter, Listener } = gadgetd.schemas["counter.capnp"];
  const out = document.getElementById("value");
  const show = (v) => { out.textContent = String(v); console.log("counter value " + v); };
  console.log("counter UI loaded");
  let counter = null;
  let subscription = null; // the watch lasts while the page holds it
  let failNext = false; // the "fail next" button makes the listener fail once
  document.getElementById("fail").onclick = () => { failNext = true; };
  const listener = new Listener.Server({ changed: async (p) => {
    if (failNext) {
      failNext = false;
      throw new Error("the listener failed on purpose");
    }
    show(p.value);
  } });
  gadgetd.onSession(Counter, async (session) => {
    counter = session;
    const watched = await session.watch((p) => { p.listener = listener.client(); }).promise();
    subscription = watched.handle;
    show(watched.value);
  });
  // {bench: n} from the shell page: n calls one after another, then the
  // median's time in the console (performance.now, which the browser
  // coarsens, to 100 µs in a frame like this one).
  addEventListener("message", async (ev) => {
    if (ev.source !== parent || !(ev.data?.bench > 0)) return;
    const times = [];
    for (let i = 0; i < ev.data.bench; i++) {
      const start = performance.now();
      await counter.get().promise();
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    console.log("bench p50 " + times[Math.floor(times.length / 2)] * 1000 + " us");
  });
  document.getElementById("inc").onclick = async () => {
    show((await counter.increment((p) => { p.by = 1n; }).promise()).value);
  };
</script></body></html>`
}

// gadgetd is a real server, served on loopback.
type gadgetd struct {
	srv   *server.Server
	url   string // http://127.0.0.1:port/
	token string // alice's
}

func startGadgetd(t testing.TB) *gadgetd {
	t.Helper()
	RequireChromium(t) // before the work of starting a server
	return serveCounter(t)
}

// serveCounter is a real server with the test counter and its test UI,
// served on loopback.
func serveCounter(t testing.TB) *gadgetd {
	t.Helper()
	bundle := blueprinttest.Bundle(t, blueprinttest.TestCounter)
	bundle.UIHTML = counterUI(t)
	return serveBlueprints(t, []*blueprint.Bundle{bundle})
}

// serveBlueprints is a real server with the blueprints installed, served
// on loopback; opts come after the tests' own options.
func serveBlueprints(t testing.TB, bundles []*blueprint.Bundle, opts ...server.Option) *gadgetd {
	t.Helper()
	ctx := context.Background()
	srv, err := server.Open(ctx, t.TempDir(), append([]server.Option{
		server.WithWasmOptions(wasmhost.WithCompilationCacheDir(compileCache)),
		server.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bundles {
		if _, err := srv.InstallBuiltin(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	token, err := srv.IssueToken(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(web.Handler(web.WithCapnp(srv)))
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("closing the server: %v", err)
		}
	})
	return &gadgetd{srv: srv, url: hs.URL + "/", token: token}
}

// eval runs js in the shell page and decodes its value.
func eval[T any](t testing.TB, tab context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// waitFor waits until js is true in the shell page: a minute, a bound for
// a busy machine, not a speed the test asks for.
func waitFor(t testing.TB, tab context.Context, what, js string) {
	t.Helper()
	waitIn(t, chromium{tab}, what, js)
}

// consoleText is what the open gadget's console panel shows.
const consoleText = `(document.querySelector(".console")?.textContent ?? "")`

// The test UI's buttons, in pixels from the frame's left edge.
const (
	incrementX = 40  // +1
	failNextX  = 200 // makes the UI's listener fail once
)

// loginAndCreateCounter is logInAndCreateCounter in a Chromium tab.
func loginAndCreateCounter(t testing.TB, g *gadgetd, tab context.Context) {
	t.Helper()
	logInAndCreateCounter(t, g, chromium{tab})
}

// logInAndCreateCounter opens the login link serve --dev prints, creates a
// counter in the shell and waits until its frame is connected.
func logInAndCreateCounter(t testing.TB, g *gadgetd, tab browserTab) {
	t.Helper()
	if err := tab.Navigate(g.url + "#token=" + g.token); err != nil {
		t.Fatal(err)
	}
	waitIn(t, tab, "the blueprint list", `document.querySelector("#create-blueprint option[value=counter]")`)
	var url string
	if err := tab.Evaluate(`location.href`, &url); err != nil || url != g.url {
		t.Errorf("after login the address is %q (%v), want %q: the token must leave the address bar", url, err, g.url)
	}
	if err := tab.Evaluate(`(() => {
  document.querySelector("#create-name").value = "my counter";
  document.querySelector("#create button[type=submit]").click();
})()`, nil); err != nil {
		t.Fatal(err)
	}
	waitIn(t, tab, "the new gadget in the list", `[...document.querySelectorAll("#gadget-list .name")].some((n) => n.textContent === "my counter")`)
	waitIn(t, tab, "the frame's connection", `document.querySelector(".open-gadget .status")?.textContent === "connected"`)
	waitIn(t, tab, "the UI's first value", consoleText+`.includes("counter value 0")`)
}

// TestAUserLogsInCreatesACounterAndUsesItInItsFrame: from the login link,
// a user creates a counter, clicks +1 in its frame, and the frame shows
// the value the gadget returned; the console panel shows the frame's
// console.log; the gadget's state changed on the server.
func TestAUserLogsInCreatesACounterAndUsesItInItsFrame(t *testing.T) {
	aUserCreatesACounterAndUsesIt(t, inChromium)
}

func aUserCreatesACounterAndUsesIt(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveCounter(t)
	logInAndCreateCounter(t, g, tab)
	clickIn(t, tab, incrementX)
	waitIn(t, tab, "the value after +1 in the console panel", consoleText+`.includes("counter value 1")`)
	clickIn(t, tab, incrementX)
	waitIn(t, tab, "the value after +1 +1 in the console panel", consoleText+`.includes("counter value 2")`)
}

// TestADroppedFrameSocketReconnectsWithoutReloadingTheGadget: when the
// frame's websocket drops, the shell gets a new ticket and socket and
// hands the frame a new port; the frame, not reloaded, goes on working.
func TestADroppedFrameSocketReconnectsWithoutReloadingTheGadget(t *testing.T) {
	droppedFrameSocketReconnects(t, inChromium)
}

// droppedFrameSocketReconnects creates a counter in a tab of b, closes its
// frame's websocket, and checks that the frame goes on, on a new socket.
func droppedFrameSocketReconnects(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveCounter(t)
	// Keep every websocket the page opens where the test can reach it.
	// A script the browser is told to run is not subject to the page's
	// policy.
	if err := tab.AddPreloadScript(`
  window.testSockets = [];
  const Native = WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) { super(...args); testSockets.push(this); }
  };`); err != nil {
		t.Fatal(err)
	}
	logInAndCreateCounter(t, g, tab)
	clickIn(t, tab, incrementX)
	waitIn(t, tab, "the value after +1", consoleText+`.includes("counter value 1")`)

	var dropped int
	if err := tab.Evaluate(`(() => { const s = testSockets.filter((s) => s.url.includes("/ws/frame") && s.readyState === 1); s.forEach((s) => s.close()); return s.length; })()`, &dropped); err != nil || dropped != 1 {
		t.Fatalf("found %d open frame sockets (%v), want 1", dropped, err)
	}
	waitIn(t, tab, "a second frame socket", `testSockets.filter((s) => s.url.includes("/ws/frame") && s.readyState === 1).length === 1 && testSockets.filter((s) => s.url.includes("/ws/frame")).length === 2`)
	waitIn(t, tab, "the connection again", `document.querySelector(".open-gadget .status")?.textContent === "connected"`)
	// onSession reports the new session: the UI reads the value again.
	waitIn(t, tab, "the value read again on the new session", `(`+consoleText+`.match(/counter value 1/g) || []).length >= 2`)
	clickIn(t, tab, incrementX)
	waitIn(t, tab, "the value after +1 on the new socket", consoleText+`.includes("counter value 2")`)
	var loads int
	if err := tab.Evaluate(`(`+consoleText+`.match(/counter UI loaded/g) || []).length`, &loads); err != nil || loads != 1 {
		t.Errorf("the counter UI loaded %d times (%v), want once: reconnecting must not reload the frame", loads, err)
	}
	var tickets []string
	if err := tab.Evaluate(`testSockets.filter((s) => s.url.includes("/ws/frame")).map((s) => new URL(s.url).searchParams.get("ticket"))`, &tickets); err != nil || len(tickets) != 2 || tickets[0] == tickets[1] {
		t.Errorf("frame tickets %q (%v): want two different ones, a fresh ticket per socket", tickets, err)
	}
}

// TestTwoTabsOnOneGadgetSeeEachOthersChangesLive: the listener each frame
// hands the gadget's watch is called, from inside the wasm sandbox, when
// the other tab increments.
func TestTwoTabsOnOneGadgetSeeEachOthersChangesLive(t *testing.T) {
	twoTabsSeeEachOthersChanges(t, inChromium)
}

// twoTabsSeeEachOthersChanges creates a counter in a tab of b, opens it in
// another tab of the same browser, and has each tab see the other's +1.
func twoTabsSeeEachOthersChanges(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveCounter(t)
	other, err := tab.OpenTab()
	if err != nil {
		t.Fatal(err)
	}
	logInAndCreateCounter(t, g, tab)
	if err := other.Navigate(g.url + "#token=" + g.token); err != nil {
		t.Fatal(err)
	}
	waitIn(t, other, "the gadget in the second tab's list", `document.querySelector("#gadget-list button.open")`)
	if err := other.Evaluate(`document.querySelector("#gadget-list button.open").click()`, nil); err != nil {
		t.Fatal(err)
	}
	waitIn(t, other, "the second tab's first value", consoleText+`.includes("counter value 0")`)
	clickIn(t, tab, incrementX)
	waitIn(t, other, "the first tab's +1, live in the second", consoleText+`.includes("counter value 1")`)
	clickIn(t, other, incrementX)
	waitIn(t, tab, "the second tab's +1, live in the first", consoleText+`.includes("counter value 2")`)
}

// TestAWrongTokenShowsTheLoginFormWithTheServersReason: a link with a bad
// token ends at the login form, with the server's reason, and the token is
// forgotten; typing the right one logs in.
func TestAWrongTokenShowsTheLoginFormWithTheServersReason(t *testing.T) {
	aWrongTokenShowsTheLoginForm(t, inChromium)
}

func aWrongTokenShowsTheLoginForm(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveCounter(t)
	if err := tab.Navigate(g.url + "#token=not-a-token"); err != nil {
		t.Fatal(err)
	}
	waitIn(t, tab, "the login form with the reason", `document.querySelector(".login .error")?.textContent.includes("invalid token")`)
	var stored bool
	if err := tab.Evaluate(`sessionStorage.getItem("gadgetd.token") !== null`, &stored); err != nil {
		t.Fatal(err)
	} else if stored {
		t.Error("the shell kept a token the server refused")
	}
	typeInto(t, tab, "#token", g.token)
	click(t, tab, ".login button[type=submit]")
	waitIn(t, tab, "the shell after typing the right token", `document.querySelector("#create-blueprint option[value=counter]")`)
}

// TestAUserRemovesAGadgetFromTheShell: removing takes a second click, and
// then the gadget is gone from the list and from the server.
func TestAUserRemovesAGadgetFromTheShell(t *testing.T) {
	aUserRemovesAGadget(t, inChromium)
}

func aUserRemovesAGadget(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveCounter(t)
	logInAndCreateCounter(t, g, tab)
	click(t, tab, ".open-gadget button.remove")
	var n int
	if err := tab.Evaluate(`document.querySelectorAll("#gadget-list button.open").length`, &n); err != nil || n != 1 {
		t.Fatalf("one click removed the gadget (%d left in the list, %v); removing must ask first", n, err)
	}
	click(t, tab, ".open-gadget button.remove")
	waitIn(t, tab, "the empty list", `document.querySelector("#gadget-list")?.textContent === "None yet."`)
	if n := g.gadgetCount(t); n != 0 {
		t.Errorf("the server still has %d of alice's gadgets", n)
	}
}

// gadgetCount asks the server, in process, how many gadgets alice has.
func (g *gadgetd) gadgetCount(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gw := g.srv.Gateway()
	defer gw.Release()
	login, release := gw.Login(ctx, func(p schema.Gateway_login_Params) error { return p.SetToken(g.token) })
	defer release()
	list, release := login.Workspace().Gadgets(ctx, nil)
	defer release()
	res, err := list.Struct()
	if err != nil {
		t.Fatalf("Workspace.gadgets: %v", err)
	}
	gadgets, err := res.Gadgets()
	if err != nil {
		t.Fatal(err)
	}
	return gadgets.Len()
}

// TestTheLogsPanelShowsTheGadgetsLog: when the frame's listener fails, the
// gadget logs that it dropped it, and the logs panel shows that line.
func TestTheLogsPanelShowsTheGadgetsLog(t *testing.T) {
	theLogsPanelShowsTheGadgetsLog(t, inChromium)
}

func theLogsPanelShowsTheGadgetsLog(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveCounter(t)
	logInAndCreateCounter(t, g, tab)
	waitIn(t, tab, "the logs panel", `document.querySelector(".logs")?.textContent === "No log lines."`)
	clickIn(t, tab, failNextX)
	clickIn(t, tab, incrementX)
	waitIn(t, tab, "the value after +1", consoleText+`.includes("counter value 1")`)
	// The panel reads the log when its button is clicked: until the line
	// is there, click again.
	const logs = `document.querySelector(".logs")?.textContent`
	ok := waitUntil(time.Minute, func() bool {
		click(t, tab, `section[aria-label=Logs] header button`)
		time.Sleep(200 * time.Millisecond)
		var v bool
		return tab.Evaluate(logs+`.includes("dropping a listener that failed")`, &v) == nil && v
	})
	if !ok {
		var text string
		tab.Evaluate(logs, &text)
		t.Fatalf("the logs panel shows %q, want the gadget's line about the failed listener", text)
	}
}

// TestAServerItCannotReachKeepsTheTokenAndOffersARetry: when /ws does not
// answer (here: a shell served with no Cap'n Proto server behind it), the
// shell says so and keeps the token, rather than asking to log in again.
func TestAServerItCannotReachKeepsTheTokenAndOffersARetry(t *testing.T) {
	aServerItCannotReachKeepsTheToken(t, inChromium)
}

func aServerItCannotReachKeepsTheToken(t *testing.T, b browser) {
	tab := b.newTab(t)
	if err := tab.Navigate(newPages(t).shell + "#token=a-token"); err != nil {
		t.Fatal(err)
	}
	waitIn(t, tab, "the retry button", `[...document.querySelectorAll("main button")].some((b) => b.textContent === "Try again")`)
	var msg, token string
	if err := tab.Evaluate(`document.querySelector("main .error").textContent`, &msg); err != nil || !strings.Contains(msg, "cannot connect") {
		t.Errorf("the shell says %q (%v), want that it cannot connect", msg, err)
	}
	if err := tab.Evaluate(`sessionStorage.getItem("gadgetd.token") ?? ""`, &token); err != nil || token != "a-token" {
		t.Errorf("the shell kept the token %q (%v), want a-token", token, err)
	}
}

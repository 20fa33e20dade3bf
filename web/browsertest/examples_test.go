package browsertest

// End-to-end tests of the examples' UIs (examples/counter/ui.html,
// examples/notes/ui.html) as a user meets them: the real examples, built by
// blueprinttest with their generated JS bindings inlined, on a real server,
// in the shell, in headless Chromium. A test uses a gadget's frame as a user
// does, with real mouse clicks and key presses, and reads what it shows;
// DevTools, attached to the frame's own target, finds where to click and
// reads the frame's DOM (the shell page cannot script the frame, and the
// UIs offer the tests nothing of their own).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/gadgetd/gadgetd/examples/notes/notespb"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/blueprint/scaffold"
	"github.com/gadgetd/gadgetd/internal/blueprint/toolchain"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// startExamples is a real server with the examples installed as `make run`
// installs them.
func startExamples(t testing.TB, opts ...server.Option) *gadgetd {
	t.Helper()
	RequireChromium(t)
	return serveBlueprints(t, []*blueprint.Bundle{blueprinttest.ExampleBundle(t, "counter"), blueprinttest.ExampleBundle(t, "notes")}, opts...)
}

// login opens the login link `make run` prints and waits for the shell.
func login(t testing.TB, g *gadgetd, tab context.Context) {
	t.Helper()
	if err := chromedp.Do(tab, chromedp.Navigate(g.url+"#token="+g.token)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "the blueprint list", `document.querySelector("#create-blueprint option")`)
}

// createGadget creates a gadget of the blueprint in the shell, which opens
// it, and waits until its frame is connected.
func createGadget(t testing.TB, tab context.Context, blueprint, name string) {
	t.Helper()
	if err := chromedp.Do(tab,
		chromedp.SetValue("#create-blueprint", blueprint),
		chromedp.SendKeys("#create-name", name),
		chromedp.Click(`#create button[type=submit]`),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "the new gadget's frame connected", `document.querySelector(".open-gadget h2")?.textContent === `+jsString(name)+
		` && document.querySelector(".open-gadget .status")?.textContent === "connected"`)
}

// gadgetFrame returns a context for the open gadget's frame in tab, for
// chromedp.Run: Chromium runs the sandboxed frame in a process of its own
// (an "iframe" target), which the page's DOM tree does not reach. replaced
// are frames of the tab from earlier gadgetFrame calls that the page has
// since replaced, and which may still be listed for a moment.
func gadgetFrame(t testing.TB, tab context.Context, replaced ...context.Context) context.Context {
	t.Helper()
	page := chromedp.FromContext(tab).Target.TargetID
	old := map[target.ID]bool{}
	for _, f := range replaced {
		old[chromedp.FromContext(f).Target.TargetID] = true
	}
	var id target.ID
	ok := waitUntil(time.Minute, func() bool {
		infos, err := chromedp.Targets(tab)
		for _, info := range infos {
			if err == nil && info.Type == "iframe" && info.ParentID == page && !old[info.TargetID] {
				id = info.TargetID
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatal("waited a minute for the gadget's frame to be a target of its own")
	}
	// Detach rather than close the frame when the test is done with it.
	ctx, cancel := chromedp.NewContext(tab, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	t.Cleanup(cancel)
	// Attach now, on this context: the attachment lasts as long as the
	// context of the first Run, and the queries run on short-lived ones.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("attaching to the gadget's frame: %v", err)
	}
	return ctx
}

// frameQueryTimeout bounds one query in a frame, which would otherwise
// wait for its element until the test's end.
const frameQueryTimeout = 5 * time.Second

// waitForText waits until the element sel in the frame shows want: a
// minute, a bound for a busy machine.
func waitForText(t testing.TB, frame context.Context, what, sel, want string) {
	t.Helper()
	var got string
	var err error
	ok := waitUntil(time.Minute, func() bool {
		ctx, cancel := context.WithTimeout(frame, frameQueryTimeout)
		defer cancel()
		got, err = chromedp.Run(ctx, chromedp.Text(sel))
		return err == nil && got == want
	})
	if !ok {
		t.Fatalf("waited a minute for %s: the frame's %s shows %q (%v), want %q", what, sel, got, err, want)
	}
}

// frameEval evaluates js in the frame's page (DevTools runs it beside the
// frame's policy, not under it) and decodes its value.
func frameEval[T any](frame context.Context, js string) (T, error) {
	ctx, cancel := context.WithTimeout(frame, frameQueryTimeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](js))
}

// waitInFrame waits until js is true in the frame: a minute, a bound for a
// busy machine.
func waitInFrame(t testing.TB, frame context.Context, what, js string) {
	t.Helper()
	ok := waitUntil(time.Minute, func() bool {
		v, err := frameEval[bool](frame, "Boolean("+js+")")
		return err == nil && v
	})
	if !ok {
		text, err := frameEval[string](frame, "document.body.innerText")
		t.Fatalf("waited a minute for %s (%s); the frame says (%v):\n%s", what, js, err, text)
	}
}

// click clicks the element sel in the frame, once it is shown and
// enabled, with a real mouse event at its middle.
func click(t testing.TB, frame context.Context, sel string) {
	t.Helper()
	waitInFrame(t, frame, sel+" shown and enabled", `((e) => e?.checkVisibility() && e.disabled === false)(document.querySelector(`+jsString(sel)+`))`)
	at, err := frameEval[[]float64](frame, `(() => {
  const e = document.querySelector(`+jsString(sel)+`);
  e.scrollIntoView({block: "center"});
  const r = e.getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2];
})()`)
	if err != nil {
		t.Fatalf("finding %s in the frame: %v", sel, err)
	}
	ctx, cancel := context.WithTimeout(frame, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(at[0], at[1])); err != nil {
		t.Fatalf("clicking %s in the frame: %v", sel, err)
	}
}

// frameTexts is a JS expression: the text of every element sel matches,
// joined by " | ".
func frameTexts(sel string) string {
	return `[...document.querySelectorAll(` + jsString(sel) + `)].map((e) => e.textContent).join(" | ")`
}

// typeInto clicks the element sel of the frame and types text into it,
// key by key.
func typeInto(t testing.TB, frame context.Context, sel, text string) {
	t.Helper()
	click(t, frame, sel)
	ctx, cancel := context.WithTimeout(frame, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.KeyEvent(text)); err != nil {
		t.Fatalf("typing into %s in the frame: %v", sel, err)
	}
}

// TestTheCounterExampleCountsInItsFrame: from the login link, a user
// creates a counter of examples/counter, clicks +1 in its frame, and the
// frame shows the value; the count is the gadget's, kept on the server.
func TestTheCounterExampleCountsInItsFrame(t *testing.T) {
	g := startExamples(t)
	tab := NewTab(t)
	login(t, g, tab)
	createGadget(t, tab, "counter", "my counter")
	frame := gadgetFrame(t, tab)
	waitForText(t, frame, "the first value", "#value", "0")
	click(t, frame, "#increment")
	waitForText(t, frame, "the value after +1", "#value", "1")
	click(t, frame, "#increment")
	waitForText(t, frame, "the value after +1 +1", "#value", "2")
	// GADGETD_SHELL_SCREENSHOT=$PWD/docs/shell.png makes the README's picture.
	if path := os.Getenv("GADGETD_SHELL_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A fresh page (the frame's state gone) reads the value from the gadget.
	if err := chromedp.Do(tab, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "the gadget in the list after a reload", `document.querySelector("#gadget-list button.open")`)
	if err := chromedp.Do(tab, chromedp.Click("#gadget-list button.open")); err != nil {
		t.Fatal(err)
	}
	waitForText(t, gadgetFrame(t, tab, frame), "the value after a reload", "#value", "2")
}

// TestTwoTabsOnOneCounterExampleSeeEachOthersChangesLive: each tab's frame
// hands the gadget a listener implemented in JS, which the gadget calls
// from inside its wasm sandbox when the other tab increments; the frame
// shows the new value without a click of its own.
func TestTwoTabsOnOneCounterExampleSeeEachOthersChangesLive(t *testing.T) {
	g := startExamples(t)
	tab := NewTab(t)
	login(t, g, tab)
	createGadget(t, tab, "counter", "shared counter")
	first := gadgetFrame(t, tab)
	waitForText(t, first, "the first tab's first value", "#value", "0")

	other, cancel := chromedp.NewContext(tab) // a second tab of the same browser
	defer cancel()
	login(t, g, other)
	waitFor(t, other, "the gadget in the second tab's list", `document.querySelector("#gadget-list button.open")`)
	if err := chromedp.Do(other, chromedp.Click("#gadget-list button.open")); err != nil {
		t.Fatal(err)
	}
	second := gadgetFrame(t, other)
	waitForText(t, second, "the second tab's first value", "#value", "0")

	click(t, first, "#increment")
	waitForText(t, second, "the first tab's +1, live in the second", "#value", "1")
	click(t, second, "#increment")
	waitForText(t, first, "the second tab's +1, live in the first", "#value", "2")
	// Both listeners heard the changes: the gadget dropped none of them (a
	// UI that watches again after a drop would show the values too).
	if logs := gadgetLogs(t, tab); logs != "No log lines." {
		t.Errorf("the gadget's log says %q, want no line: it dropped a listener", logs)
	}
}

// TestTheCounterExampleWatchesAgainWhenTheGadgetLetsGoOfItsListener: an
// instance idle for a second is stopped, and lets go of the listeners it
// held; each frame sees its listener released, watches again on the next
// instance, and goes on showing the other tab's changes live.
func TestTheCounterExampleWatchesAgainWhenTheGadgetLetsGoOfItsListener(t *testing.T) {
	g := startExamples(t, server.WithWasmOptions(wasmhost.WithIdleTimeout(time.Second)))
	tab := NewTab(t)
	login(t, g, tab)
	createGadget(t, tab, "counter", "idle counter")
	first := gadgetFrame(t, tab)
	waitForText(t, first, "the first tab's first value", "#value", "0")
	other, cancel := chromedp.NewContext(tab)
	defer cancel()
	login(t, g, other)
	waitFor(t, other, "the gadget in the second tab's list", `document.querySelector("#gadget-list button.open")`)
	if err := chromedp.Do(other, chromedp.Click("#gadget-list button.open")); err != nil {
		t.Fatal(err)
	}
	second := gadgetFrame(t, other)
	waitForText(t, second, "the second tab's first value", "#value", "0")

	// Idle instances stop after a second (and the frames' watches start
	// new ones); a few seconds without a click see several stop.
	time.Sleep(4 * time.Second)
	click(t, first, "#increment")
	waitForText(t, second, "the first tab's +1, live in the second after the instance stopped", "#value", "1")
	time.Sleep(4 * time.Second)
	click(t, second, "#increment")
	waitForText(t, first, "the second tab's +1, live in the first after the instance stopped", "#value", "2")
}

// gadgetLogs is what the open gadget's logs panel shows once it has read
// the gadget's log afresh.
func gadgetLogs(t testing.TB, tab context.Context) string {
	t.Helper()
	if err := chromedp.Do(tab,
		chromedp.Evaluate[chromedp.Void](`document.querySelector(".logs").replaceChildren()`),
		chromedp.Click(`section[aria-label=Logs] header button`),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "the logs panel", `document.querySelector(".logs").textContent !== ""`)
	return eval[string](t, tab, `document.querySelector(".logs").textContent`)
}

// TestTheNotesExampleAddsANoteAndFindsItBySearch: in a notes gadget's
// frame a user adds two notes, which the list shows newest first, and a
// search (ignoring case) shows only the one that matches.
func TestTheNotesExampleAddsANoteAndFindsItBySearch(t *testing.T) {
	g := startExamples(t)
	tab := NewTab(t)
	login(t, g, tab)
	createGadget(t, tab, "notes", "my notes")
	frame := gadgetFrame(t, tab)
	waitInFrame(t, frame, "the editor and the empty list", `!document.getElementById("editor").hidden && `+frameTexts("#notes li")+` === "No notes yet."`)

	typeInto(t, frame, "#title", "Groceries")
	typeInto(t, frame, "#body", "milk, eggs and saffron")
	click(t, frame, "#save")
	waitInFrame(t, frame, "the first note in the list", frameTexts("#notes li h3")+` === "Groceries"`)
	typeInto(t, frame, "#title", "Plans")
	typeInto(t, frame, "#body", "a walk by the river")
	click(t, frame, "#save")
	waitInFrame(t, frame, "both notes, newest first", frameTexts("#notes li h3")+` === "Plans | Groceries"`)
	waitInFrame(t, frame, "the stats", `document.getElementById("stats").textContent.startsWith("2 notes")`)

	typeInto(t, frame, "#query", "SAFFRON")
	waitInFrame(t, frame, "only the note that matches", frameTexts("#notes li h3")+` === "Groceries"`)
	click(t, frame, "#clear")
	waitInFrame(t, frame, "both notes again", frameTexts("#notes li h3")+` === "Plans | Groceries"`)
	typeInto(t, frame, "#query", "nothing like it")
	waitInFrame(t, frame, "no match", frameTexts("#notes li")+` === "No note matches."`)
}

// TestTheNotesExampleEditsAndDeletesANote: Edit puts a note in the
// editor, saving replaces it, Delete removes it, and an invalid note gets
// the gadget's reason.
func TestTheNotesExampleEditsAndDeletesANote(t *testing.T) {
	g := startExamples(t)
	tab := NewTab(t)
	login(t, g, tab)
	createGadget(t, tab, "notes", "my notes")
	frame := gadgetFrame(t, tab)
	waitInFrame(t, frame, "the editor", `!document.getElementById("editor").hidden`)

	click(t, frame, "#save")
	waitInFrame(t, frame, "the gadget's reason for an empty title", `document.getElementById("error").textContent.includes("title")`)
	typeInto(t, frame, "#title", "Draft")
	click(t, frame, "#save")
	waitInFrame(t, frame, "the note", frameTexts("#notes li h3")+` === "Draft"`)

	click(t, frame, "#notes li button.edit")
	waitInFrame(t, frame, "the note in the editor", `document.getElementById("title").value === "Draft"`)
	typeInto(t, frame, "#title", " two")
	click(t, frame, "#save")
	waitInFrame(t, frame, "the edited note", frameTexts("#notes li h3")+` === "Draft two" && `+frameTexts("#notes li .meta span")+`.includes("edited")`)

	click(t, frame, "#notes li button.delete")
	waitInFrame(t, frame, "the empty list", frameTexts("#notes li")+` === "No notes yet."`)
}

// TestTheNotesExamplePagesThroughMoreNotesThanOnePage: with more notes
// than the UI asks for at once (50), it shows the newest page, and Load
// more adds the rest, the oldest last.
func TestTheNotesExamplePagesThroughMoreNotesThanOnePage(t *testing.T) {
	g := startExamples(t)
	const n = 60
	g.createNotes(t, "many notes", n)
	tab := NewTab(t)
	login(t, g, tab)
	waitFor(t, tab, "the gadget in the list", `document.querySelector("#gadget-list button.open")`)
	if err := chromedp.Do(tab, chromedp.Click("#gadget-list button.open")); err != nil {
		t.Fatal(err)
	}
	frame := gadgetFrame(t, tab)
	waitInFrame(t, frame, "the first page, newest first", `document.querySelectorAll("#notes li").length === 50 && `+
		`document.querySelector("#notes li h3").textContent === "note 60"`)
	click(t, frame, "#more")
	waitInFrame(t, frame, "every note", `document.querySelectorAll("#notes li").length === 60 && `+
		`document.querySelector("#notes li:last-child h3").textContent === "note 1" && document.getElementById("more").hidden`)
}

// createNotes creates a notes gadget of alice's with n notes, "note 1" to
// "note n", through the server in process.
func (g *gadgetd) createNotes(t *testing.T, name string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gw := g.srv.Gateway()
	defer gw.Release()
	login, release := gw.Login(ctx, func(p schema.Gateway_login_Params) error { return p.SetToken(g.token) })
	defer release()
	created, release := login.Workspace().Create(ctx, func(p schema.Workspace_create_Params) error {
		if err := p.SetBlueprint("notes"); err != nil {
			return err
		}
		return p.SetName(name)
	})
	defer release()
	opened, release := created.Gadget().Open(ctx, nil)
	defer release()
	notes := notespb.Notes(opened.Session())
	for i := 1; i <= n; i++ {
		f, release := notes.Add(ctx, func(p notespb.Notes_add_Params) error { return p.SetTitle(fmt.Sprintf("note %d", i)) })
		_, err := f.Struct()
		release()
		if err != nil {
			t.Fatalf("adding note %d: %v", i, err)
		}
	}
}

// TestTheScaffoldsUIGreetsInTheShell: a blueprint fresh from the scaffold
// (gadgetd blueprint new, outside this module), built, works in the shell
// as it is: its UI gets its typed session from the bindings its build
// generated, and greets the user by the visit its gadget counted.
func TestTheScaffoldsUIGreetsInTheShell(t *testing.T) {
	RequireChromium(t)
	dir := filepath.Join(t.TempDir(), "hello")
	if _, err := scaffold.Write(dir, scaffold.Options{
		Name: "hello-ui", Module: "example.com/me/hello", GoVersion: strings.TrimPrefix(goruntime.Version(), "go"),
		GadgetdVersion: "v0.0.0-00010101000000-000000000000", CapnpVersion: "v3.1.0-alpha.2",
		SDKDir: blueprinttest.RepoRoot(),
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := toolchain.Prepare(ctx, dir); err != nil {
		t.Fatal(err)
	}
	g := serveBlueprints(t, []*blueprint.Bundle{blueprinttest.Bundle(t, dir)})
	tab := NewTab(t)
	login(t, g, tab)
	createGadget(t, tab, "hello-ui", "my hello")
	frame := gadgetFrame(t, tab)
	waitForText(t, frame, "the first greeting", "#greeting", "Hello, alice! This is visit 1.")
	click(t, frame, "#visit")
	waitForText(t, frame, "the second greeting", "#greeting", "Hello, alice! This is visit 2.")
}

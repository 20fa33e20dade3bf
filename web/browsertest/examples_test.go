package browsertest

// End-to-end tests of the examples' UIs (examples/counter/ui.html,
// examples/notes/ui.html) as a user meets them: the real examples, built by
// blueprinttest with their generated JS bindings inlined, on a real server,
// in the shell, in headless Chromium and in Firefox. A test uses a gadget's
// frame as a user does, with real mouse clicks and key presses, and reads
// what it shows; the browser's automation (DevTools, WebDriver BiDi), which
// reaches the frame's own document, finds where to click and reads the
// frame's DOM (the shell page cannot script the frame, and the UIs offer
// the tests nothing of their own).

import (
	"context"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/examples/notes/notespb"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/blueprint/scaffold"
	"github.com/gadgetd/gadgetd/internal/blueprint/toolchain"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// serveExamples is a real server with the examples installed as `make run`
// installs them.
func serveExamples(t testing.TB, opts ...server.Option) *gadgetd {
	t.Helper()
	return serveBlueprints(t, []*blueprint.Bundle{blueprinttest.ExampleBundle(t, "counter"), blueprinttest.ExampleBundle(t, "notes")}, opts...)
}

// login is logIn in a Chromium tab.
func login(t testing.TB, g *gadgetd, tab context.Context) {
	t.Helper()
	logIn(t, g, chromium{tab})
}

// logIn opens the login link `make run` prints and waits for the shell.
func logIn(t testing.TB, g *gadgetd, tab browserTab) {
	t.Helper()
	if err := tab.Navigate(g.url + "#token=" + g.token); err != nil {
		t.Fatal(err)
	}
	waitIn(t, tab, "the blueprint list", `document.querySelector("#create-blueprint option")`)
}

// createGadget creates a gadget of the blueprint in the shell, which opens
// it, and returns its frame once it is connected.
func createGadget(t testing.TB, tab browserTab, blueprint, name string) browserTab {
	t.Helper()
	if err := tab.Evaluate(`document.querySelector("#create-blueprint").value = `+jsString(blueprint), nil); err != nil {
		t.Fatal(err)
	}
	typeInto(t, tab, "#create-name", name)
	click(t, tab, `#create button[type=submit]`)
	waitIn(t, tab, "the new gadget's frame connected", `document.querySelector(".open-gadget h2")?.textContent === `+jsString(name)+
		` && document.querySelector(".open-gadget .status")?.textContent === "connected"`)
	return gadgetFrame(t, tab)
}

// openGadget opens the first gadget of the shell's list, once it is there,
// and returns its frame; replaced are frames the page had before (see
// browserTab.GadgetFrame).
func openGadget(t testing.TB, tab browserTab, replaced ...browserTab) browserTab {
	t.Helper()
	click(t, tab, "#gadget-list button.open")
	return gadgetFrame(t, tab, replaced...)
}

// waitForText waits until the element sel in the frame shows want: a
// minute, a bound for a busy machine.
func waitForText(t testing.TB, frame browserTab, what, sel, want string) {
	t.Helper()
	waitIn(t, frame, what, `document.querySelector(`+jsString(sel)+`)?.textContent === `+jsString(want))
}

// frameTexts is a JS expression: the text of every element sel matches,
// joined by " | ".
func frameTexts(sel string) string {
	return `[...document.querySelectorAll(` + jsString(sel) + `)].map((e) => e.textContent).join(" | ")`
}

// TestTheCounterExampleCountsInItsFrame: from the login link, a user
// creates a counter of examples/counter, clicks +1 in its frame, and the
// frame shows the value; the count is the gadget's, kept on the server.
func TestTheCounterExampleCountsInItsFrame(t *testing.T) {
	theCounterExampleCounts(t, inChromium)
}

func theCounterExampleCounts(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveExamples(t)
	logIn(t, g, tab)
	frame := createGadget(t, tab, "counter", "my counter")
	waitForText(t, frame, "the first value", "#value", "0")
	click(t, frame, "#increment")
	waitForText(t, frame, "the value after +1", "#value", "1")
	click(t, frame, "#increment")
	waitForText(t, frame, "the value after +1 +1", "#value", "2")
	// A fresh page (the frame's state gone, the token kept in the tab's
	// session storage) reads the value from the gadget.
	if err := tab.Navigate(g.url); err != nil {
		t.Fatal(err)
	}
	waitForText(t, openGadget(t, tab, frame), "the value after a reload", "#value", "2")
}

// TestTwoTabsOnOneCounterExampleSeeEachOthersChangesLive: each tab's frame
// hands the gadget a listener implemented in JS, which the gadget calls
// from inside its wasm sandbox when the other tab increments; the frame
// shows the new value without a click of its own.
func TestTwoTabsOnOneCounterExampleSeeEachOthersChangesLive(t *testing.T) {
	twoTabsOnOneCounterExample(t, inChromium)
}

func twoTabsOnOneCounterExample(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveExamples(t)
	first, second := openCounterInTwoTabs(t, g, tab, "shared counter")
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

// openCounterInTwoTabs creates a counter in tab, opens it in another tab
// of the same browser, and returns both frames once they show 0.
func openCounterInTwoTabs(t *testing.T, g *gadgetd, tab browserTab, name string) (first, second browserTab) {
	t.Helper()
	logIn(t, g, tab)
	first = createGadget(t, tab, "counter", name)
	waitForText(t, first, "the first tab's first value", "#value", "0")
	other, err := tab.OpenTab()
	if err != nil {
		t.Fatal(err)
	}
	logIn(t, g, other)
	second = openGadget(t, other)
	waitForText(t, second, "the second tab's first value", "#value", "0")
	return first, second
}

// TestTheCounterExampleWatchesAgainWhenTheGadgetLetsGoOfItsListener: an
// instance idle for a second is stopped, and lets go of the listeners it
// held; each frame sees its listener released, watches again on the next
// instance, and goes on showing the other tab's changes live.
func TestTheCounterExampleWatchesAgainWhenTheGadgetLetsGoOfItsListener(t *testing.T) {
	theCounterExampleWatchesAgain(t, inChromium)
}

func theCounterExampleWatchesAgain(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveExamples(t, server.WithWasmOptions(wasmhost.WithIdleTimeout(time.Second)))
	first, second := openCounterInTwoTabs(t, g, tab, "idle counter")
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
func gadgetLogs(t testing.TB, tab browserTab) string {
	t.Helper()
	if err := tab.Evaluate(`document.querySelector(".logs").replaceChildren()`, nil); err != nil {
		t.Fatal(err)
	}
	click(t, tab, `section[aria-label=Logs] header button`)
	waitIn(t, tab, "the logs panel", `document.querySelector(".logs").textContent !== ""`)
	var logs string
	if err := tab.Evaluate(`document.querySelector(".logs").textContent`, &logs); err != nil {
		t.Fatal(err)
	}
	return logs
}

// TestTheNotesExampleAddsANoteAndFindsItBySearch: in a notes gadget's
// frame a user adds two notes, which the list shows newest first, and a
// search (ignoring case) shows only the one that matches.
func TestTheNotesExampleAddsANoteAndFindsItBySearch(t *testing.T) {
	theNotesExampleAddsAndFinds(t, inChromium)
}

func theNotesExampleAddsAndFinds(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveExamples(t)
	logIn(t, g, tab)
	frame := createGadget(t, tab, "notes", "my notes")
	waitIn(t, frame, "the editor and the empty list", `!document.getElementById("editor").hidden && `+frameTexts("#notes li")+` === "No notes yet."`)

	typeInto(t, frame, "#title", "Groceries")
	typeInto(t, frame, "#body", "milk, eggs and saffron")
	click(t, frame, "#save")
	waitIn(t, frame, "the first note in the list", frameTexts("#notes li h3")+` === "Groceries"`)
	typeInto(t, frame, "#title", "Plans")
	typeInto(t, frame, "#body", "a walk by the river")
	click(t, frame, "#save")
	waitIn(t, frame, "both notes, newest first", frameTexts("#notes li h3")+` === "Plans | Groceries"`)
	waitIn(t, frame, "the stats", `document.getElementById("stats").textContent.startsWith("2 notes")`)

	typeInto(t, frame, "#query", "SAFFRON")
	waitIn(t, frame, "only the note that matches", frameTexts("#notes li h3")+` === "Groceries"`)
	click(t, frame, "#clear")
	waitIn(t, frame, "both notes again", frameTexts("#notes li h3")+` === "Plans | Groceries"`)
	typeInto(t, frame, "#query", "nothing like it")
	waitIn(t, frame, "no match", frameTexts("#notes li")+` === "No note matches."`)
}

// TestTheNotesExampleEditsAndDeletesANote: Edit puts a note in the
// editor, saving replaces it, Delete removes it, and an invalid note gets
// the gadget's reason.
func TestTheNotesExampleEditsAndDeletesANote(t *testing.T) {
	theNotesExampleEditsAndDeletes(t, inChromium)
}

func theNotesExampleEditsAndDeletes(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveExamples(t)
	logIn(t, g, tab)
	frame := createGadget(t, tab, "notes", "my notes")
	waitIn(t, frame, "the editor", `!document.getElementById("editor").hidden`)

	click(t, frame, "#save")
	waitIn(t, frame, "the gadget's reason for an empty title", `document.getElementById("error").textContent.includes("title")`)
	typeInto(t, frame, "#title", "Draft")
	click(t, frame, "#save")
	waitIn(t, frame, "the note", frameTexts("#notes li h3")+` === "Draft"`)

	click(t, frame, "#notes li button.edit")
	waitIn(t, frame, "the note in the editor", `document.getElementById("title").value === "Draft"`)
	typeInto(t, frame, "#title", " two")
	click(t, frame, "#save")
	waitIn(t, frame, "the edited note", frameTexts("#notes li h3")+` === "Draft two" && `+frameTexts("#notes li .meta span")+`.includes("edited")`)

	click(t, frame, "#notes li button.delete")
	waitIn(t, frame, "the empty list", frameTexts("#notes li")+` === "No notes yet."`)
}

// TestTheNotesExamplePagesThroughMoreNotesThanOnePage: with more notes
// than the UI asks for at once (50), it shows the newest page, and Load
// more adds the rest, the oldest last.
func TestTheNotesExamplePagesThroughMoreNotesThanOnePage(t *testing.T) {
	theNotesExamplePages(t, inChromium)
}

func theNotesExamplePages(t *testing.T, b browser) {
	tab := b.newTab(t)
	g := serveExamples(t)
	const n = 60
	g.createNotes(t, "many notes", n)
	logIn(t, g, tab)
	frame := openGadget(t, tab)
	waitIn(t, frame, "the first page, newest first", `document.querySelectorAll("#notes li").length === 50 && `+
		`document.querySelector("#notes li h3").textContent === "note 60"`)
	click(t, frame, "#more")
	waitIn(t, frame, "every note", `document.querySelectorAll("#notes li").length === 60 && `+
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
	RequireChromium(t) // before the work of building the blueprint
	theScaffoldsUIGreets(t, inChromium)
}

func theScaffoldsUIGreets(t *testing.T, b browser) {
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
	tab := b.newTab(t)
	logIn(t, g, tab)
	frame := createGadget(t, tab, "hello-ui", "my hello")
	waitForText(t, frame, "the first greeting", "#greeting", "Hello, alice! This is visit 1.")
	click(t, frame, "#visit")
	waitForText(t, frame, "the second greeting", "#greeting", "Hello, alice! This is visit 2.")
}

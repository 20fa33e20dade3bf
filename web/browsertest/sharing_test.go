package browsertest

// The shell's sharing, end to end: two users, alice and bob, each logged
// in in a tab of their own (the shell keeps its token per tab) of one
// headless Chromium, on one real server. The subtests share the server,
// the browser and the two logins, and each makes gadgets of its own.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
)

// hostileName is a gadget name, labelMarkup a link label and titleMarkup
// a permission's title that would be markup if the shell inserted them as
// HTML: the shell must show them as the text they are, to every user.
const (
	hostileName = `<img src=x onerror="document.title='pwned'">`
	labelMarkup = `<b>for bob</b>`
	titleMarkup = `<i>Count</i> up`
)

func TestSharingFromTheShell(t *testing.T) {
	RequireChromium(t)
	// The test counter, declaring permissions of its own (which it does not
	// check), so that the dialog has them to show.
	counter := blueprinttest.Bundle(t, blueprinttest.TestCounter)
	counter.UIHTML = counterUI(t)
	counter.Access = blueprint.Access{
		Permissions: []blueprint.Permission{{Name: "read", Title: "See the count"}, {Name: "count", Title: titleMarkup}},
		Roles:       map[string][]string{"viewer": {"read"}, "editor": {"count"}},
	}
	g := serveBlueprints(t, []*blueprint.Bundle{counter})
	bobToken := g.issueToken(t, "bob")
	alice := chromium{NewTab(t)}
	bob, err := alice.OpenTab()
	if err != nil {
		t.Fatal(err)
	}
	logInWith(t, g, alice, g.token)
	logInWith(t, g, bob, bobToken)

	// alice shares a counter with bob as an editor in the share dialog;
	// bob's list shows it as alice's, its name as text; both open its
	// frame, and each sees the other's +1 without reloading. A share the
	// server refuses (an unknown user) shows the server's reason.
	t.Run("TwoUsersOnOneCounterSeeEachOthersChangesLive", func(t *testing.T) {
		id := createCounter(t, alice, hostileName)
		openShareDialog(t, alice)
		typeInto(t, alice, ".share-dialog form.share input[name=user]", "nobody")
		click(t, alice, ".share-dialog form.share button[type=submit]")
		waitIn(t, alice, "the server's refusal to share with an unknown user", `document.querySelector(".share-dialog form.share .error")?.textContent.includes("nobody")`)
		setValue(t, alice, ".share-dialog form.share input[name=user]", "")
		typeInto(t, alice, ".share-dialog form.share input[name=user]", "bob")
		setValue(t, alice, ".share-dialog form.share select[name=role]", "1") // editor
		click(t, alice, ".share-dialog form.share button[type=submit]")
		waitIn(t, alice, "bob among the shares", `document.querySelector(".share-dialog .shares li[data-user=bob]")?.textContent.includes("editor")`)
		if name := evalIn[string](t, alice, `document.querySelector(".share-dialog h2 .name").textContent`); name != hostileName {
			t.Errorf("the dialog names the gadget %q, want %q as text", name, hostileName)
		}
		waitIn(t, alice, "what each role may do", `document.querySelector(".share-dialog .role-permissions li[data-role=owner]")`)
		if said := evalIn[[]string](t, alice, `[...document.querySelectorAll(".share-dialog .role-permissions li")].map((li) => li.textContent)`); strings.Join(said, "\n") != "viewer: See the count\neditor: See the count, "+titleMarkup+"\nowner: See the count, "+titleMarkup {
			t.Errorf("the dialog says the roles may do %q, want each its own and the lower roles' permissions, titles as text", said)
		}
		if n := evalIn[int](t, alice, `document.querySelectorAll(".share-dialog i, .share-dialog h2 img").length`); n != 0 {
			t.Errorf("the dialog has %d i or img elements: a title or name became markup", n)
		}
		click(t, alice, ".share-dialog button.close")

		click(t, bob, ".sidebar .refresh")
		row := `document.querySelector(` + jsString(listed(id)) + `)`
		waitIn(t, bob, "alice's counter in bob's list", row+`?.querySelector(".whose")?.textContent === "shared by alice · editor"`)
		if name := evalIn[string](t, bob, row+`.querySelector(".name").textContent`); name != hostileName {
			t.Errorf("bob's list names the gadget %q, want %q as text", name, hostileName)
		}
		if n := evalIn[int](t, bob, `document.querySelectorAll("#gadget-list img").length`); n != 0 {
			t.Errorf("bob's list has %d img elements: a gadget name became markup", n)
		}
		if whose := evalIn[string](t, alice, `document.querySelector(`+jsString(listed(id)+" .whose")+`).textContent`); whose != "yours" {
			t.Errorf("alice's list says %q of her own counter, want yours", whose)
		}
		openListed(t, bob, id)
		waitIn(t, bob, "bob's first value", consoleText+`.includes("counter value 0")`)

		clickIn(t, alice, incrementX)
		waitIn(t, bob, "alice's +1, live in bob's frame", consoleText+`.includes("counter value 1")`)
		clickIn(t, bob, incrementX)
		waitIn(t, alice, "bob's +1, live in alice's frame", consoleText+`.includes("counter value 2")`)
	})

	// alice makes a single-use editor link in the dialog (its label shown
	// as text), bob pastes it into his shell's redeem box and gets the
	// gadget; when alice revokes the link, bob's open frame loses the
	// gadget, and so does his list.
	t.Run("ALinkRedeemedInAnotherShellEndsWhenItsCreatorRevokesIt", func(t *testing.T) {
		id := createCounter(t, alice, "linked counter")
		openShareDialog(t, alice)
		link := createLink(t, g, alice, "1", labelMarkup, true)
		waitIn(t, alice, "the new link in the list", `document.querySelector(".share-dialog .links .label")?.textContent === `+jsString(labelMarkup))
		if n := evalIn[int](t, alice, `document.querySelectorAll(".share-dialog .links b").length`); n != 0 {
			t.Errorf("the links list has %d b elements: a label became markup", n)
		}

		typeInto(t, bob, "#redeem-secret", link)
		click(t, bob, "#redeem button[type=submit]")
		waitIn(t, bob, "the redeemed gadget open in bob's shell", `document.querySelector(".open-gadget")?.dataset.id === `+jsString(id)+
			` && document.querySelector(".open-gadget .status")?.textContent === "connected"`)
		waitIn(t, bob, "the redeemed gadget in bob's list", `document.querySelector(`+jsString(listed(id)+" .whose")+`)?.textContent === "shared by alice · editor"`)
		waitIn(t, bob, "bob's first value", consoleText+`.includes("counter value 0")`)

		// Refresh the dialog's lists: the link was redeemed meanwhile.
		click(t, alice, ".share-dialog button.close")
		openShareDialog(t, alice)
		waitIn(t, alice, "the link used once", `document.querySelector(".share-dialog .links .terms")?.textContent.includes("1 redeemed")`)
		click(t, alice, ".share-dialog .links button.revoke")
		waitIn(t, alice, "the link gone from the dialog", `document.querySelector(".share-dialog .links")?.textContent === "No links."`)

		// bob's open session fails from its next call: his +1 fails with
		// the server's reason, which his frame's console shows.
		clickIn(t, bob, incrementX)
		waitIn(t, bob, "bob's +1 refused", consoleText+`.includes("was revoked")`)
		if console := evalIn[string](t, bob, consoleText); strings.Contains(console, "counter value 1") {
			t.Errorf("bob's +1 after the revocation counted: his console says %q", console)
		}
		click(t, bob, ".sidebar .refresh")
		waitIn(t, bob, "the gadget gone from bob's list, and its frame", `!document.querySelector(`+jsString(listed(id))+`) && !document.querySelector(".open-gadget") && document.querySelector(".gadget .gone")`)
	})

	// bob opens a viewer link alice made (the shell's #redeem= address),
	// which leaves the address bar and redeems only on his click, and his
	// shell, a viewer's, has no share dialog for it.
	t.Run("AViewerHasNoShareDialog", func(t *testing.T) {
		id := createCounter(t, alice, "viewed counter")
		openShareDialog(t, alice)
		link := createLink(t, g, alice, "0", "for a viewer", false)
		click(t, alice, ".share-dialog button.close")

		if err := bob.Navigate("about:blank"); err != nil {
			t.Fatal(err)
		}
		if err := bob.Navigate(link); err != nil {
			t.Fatal(err)
		}
		secret := link[strings.Index(link, "#redeem=")+len("#redeem="):]
		waitIn(t, bob, "the link's secret offered for redeeming", `document.querySelector("#redeem-secret")?.value === `+jsString(secret)+` && document.querySelector("#redeem-offer")`)
		if hash := evalIn[string](t, bob, `location.hash`); hash != "" {
			t.Errorf("the address bar keeps %q: the secret must leave it", hash)
		}
		// Opening the link redeemed nothing: bob's click does.
		click(t, bob, ".sidebar .refresh")
		waitIn(t, bob, "bob's list again", `document.querySelector("#gadget-list li")`)
		if listedBefore := evalIn[bool](t, bob, `!!document.querySelector(`+jsString(listed(id))+`)`); listedBefore {
			t.Error("opening the link put the gadget in bob's list before he clicked Redeem")
		}
		click(t, bob, "#redeem button[type=submit]")
		waitIn(t, bob, "the gadget open in bob's shell", `document.querySelector(".open-gadget")?.dataset.id === `+jsString(id)+
			` && document.querySelector(".open-gadget .whose")?.textContent === "shared by alice · viewer"`+
			` && document.querySelector(".open-gadget .status")?.textContent === "connected"`)
		if n := evalIn[int](t, bob, `document.querySelectorAll(".open-gadget .share-open, .share-dialog").length`); n != 0 {
			t.Errorf("a viewer's shell has %d share buttons or dialogs, want none", n)
		}
		if n := evalIn[int](t, alice, `document.querySelectorAll(".open-gadget .share-open").length`); n != 1 {
			t.Errorf("the owner's shell has %d share buttons, want 1", n)
		}
	})
}

// issueToken makes user name, if new, and returns a token of theirs.
func (g *gadgetd) issueToken(t testing.TB, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	token, err := g.srv.IssueToken(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// logInWith opens the shell's login link for token in tab.
func logInWith(t testing.TB, g *gadgetd, tab browserTab, token string) {
	t.Helper()
	if err := tab.Navigate(g.url + "#token=" + token); err != nil {
		t.Fatal(err)
	}
	waitIn(t, tab, "the blueprint list", `document.querySelector("#create-blueprint option[value=counter]")`)
}

// createCounter creates a test counter named name in tab's shell, waits
// until its frame shows its first value, and returns its id.
func createCounter(t testing.TB, tab browserTab, name string) string {
	t.Helper()
	// A dialog an earlier subtest left open would stand in the way.
	if err := tab.Evaluate(`document.querySelectorAll("dialog[open]").forEach((d) => d.close())`, nil); err != nil {
		t.Fatal(err)
	}
	setValue(t, tab, "#create-blueprint", "counter")
	setValue(t, tab, "#create-name", name)
	click(t, tab, "#create button[type=submit]")
	waitIn(t, tab, "the new counter open", `document.querySelector(".open-gadget h2")?.textContent === `+jsString(name)+
		` && document.querySelector(".open-gadget .status")?.textContent === "connected"`)
	waitIn(t, tab, "the new counter's first value", consoleText+`.includes("counter value 0")`)
	return evalIn[string](t, tab, `document.querySelector(".open-gadget").dataset.id`)
}

// listed is the selector of gadget id's row in the shell's list.
func listed(id string) string { return `#gadget-list li[data-id="` + id + `"]` }

// openListed opens the gadget id from tab's list and waits until its frame
// is connected.
func openListed(t testing.TB, tab browserTab, id string) {
	t.Helper()
	click(t, tab, listed(id)+" button.open")
	waitIn(t, tab, "the gadget's frame connected", `document.querySelector(".open-gadget")?.dataset.id === `+jsString(id)+
		` && document.querySelector(".open-gadget .status")?.textContent === "connected"`)
}

func openShareDialog(t testing.TB, tab browserTab) {
	t.Helper()
	click(t, tab, ".open-gadget button.share-open")
	waitIn(t, tab, "the share dialog", `document.querySelector(".share-dialog")?.open && document.querySelector(".share-dialog .links li")`)
}

// createLink creates a link in the open share dialog at role (its value
// in the dialog's select) and returns the address the dialog shows for it.
func createLink(t testing.TB, g *gadgetd, tab browserTab, role, label string, singleUse bool) string {
	t.Helper()
	const form = ".share-dialog form.create-link"
	setValue(t, tab, form+" select[name=role]", role)
	setValue(t, tab, form+" input[name=label]", label)
	if singleUse {
		click(t, tab, form+" input[name=singleUse]")
	}
	click(t, tab, form+" button[type=submit]")
	waitIn(t, tab, "the new link's address", `document.querySelector(".share-dialog .link-url")?.value.startsWith(`+jsString(g.url+"#redeem=gdl_")+`)`)
	return evalIn[string](t, tab, `document.querySelector(".share-dialog .link-url").value`)
}

// setValue sets the value of the input or select sel, as picking or
// pasting would.
func setValue(t testing.TB, tab browserTab, sel, value string) {
	t.Helper()
	if err := tab.Evaluate(`document.querySelector(`+jsString(sel)+`).value = `+jsString(value), nil); err != nil {
		t.Fatalf("setting %s: %v", sel, err)
	}
}

// evalIn evaluates js in tab's page and decodes its value.
func evalIn[T any](t testing.TB, tab browserTab, js string) T {
	t.Helper()
	var v T
	if err := tab.Evaluate(js, &v); err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

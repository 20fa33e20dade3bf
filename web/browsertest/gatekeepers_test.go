package browsertest

// The gatekeepers in the shell: binding one to a gadget, and approving or
// rejecting the actions the gadget asks for, against a GitHub-compatible
// server on loopback.

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/desk"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubtest"
	"github.com/gadgetd/gadgetd/gatekeepers/kinds"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/server"
)

// serveIssues is a real server with the issues example and a github
// service, "gh", on a GitHub-compatible server holding acme/widgets.
func serveIssues(t *testing.T) (*gadgetd, *githubtest.Server, *githubtest.Repo) {
	t.Helper()
	const token = "ghp_browser-test-token"
	gh := githubtest.NewServer(token)
	t.Cleanup(gh.Close)
	repo := gh.AddRepo("acme", "widgets")
	repo.AddIssue(githubtest.Issue{Title: "It was already broken"})
	g := serveBlueprints(t, []*blueprint.Bundle{blueprinttest.ExampleBundle(t, "issues")}, server.WithGatekeepers(kinds.All(), []desk.Service{{
		Name: "gh", Kind: "github",
		Config: gatekeepers.ServiceConfig{
			Description: "the test GitHub",
			Settings:    map[string]any{"api": gh.URL, "token_env": "GH_TOKEN", "allow_private_api": true},
			Getenv:      func(string) string { return token },
		},
	}}))
	return g, gh, repo
}

// TestAUserBindsARepositoryAndApprovesTheIssueTheGadgetFiles is the
// README's tour of gatekeepers, in the shell: the issues gadget reaches
// nothing until the user binds it, in the gatekeepers panel, to a
// repository (the name and kind it asks for filled in); an issue filed in
// its frame shows there as pending and waits in the panel, GitHub seeing
// nothing; Approve creates it on GitHub, once, and the audit log shows it.
func TestAUserBindsARepositoryAndApprovesTheIssueTheGadgetFiles(t *testing.T) {
	RequireChromium(t)
	g, gh, repo := serveIssues(t)
	tab := inChromium.newTab(t)
	logIn(t, g, tab)
	frame := createGadget(t, tab, "issues", "widgets")
	waitIn(t, frame, "the unbound gadget's error", `document.querySelector("#status")?.textContent.includes("no GitHub repository bound")`)

	waitIn(t, tab, "the bind form, with the requested name", `document.querySelector(".gatekeepers form.bind input[name=name]")?.value === "repo"`)
	typeInto(t, tab, ".gatekeepers form.bind input[name=resource]", "acme/widgets")
	click(t, tab, ".gatekeepers form.bind button[type=submit]")
	waitIn(t, tab, "the binding listed", `document.querySelector(".gatekeepers .binding .resource")?.textContent === "github acme/widgets"`)

	// The frame lists the issues once the user reloads it: reopen.
	frame = openGadget(t, tab, frame)
	waitIn(t, frame, "the repository's issue", frameTexts("#issues .title")+` === "It was already broken"`)
	typeInto(t, frame, "#title", "Crash on start")
	typeInto(t, frame, "#body", "It crashes <b>at once</b>.")
	click(t, frame, "#submit")
	waitIn(t, frame, "the pending issue in the gadget's list", `document.querySelector("#issues li.pending .title")?.textContent === "Crash on start"`)
	waitIn(t, tab, "the action waiting in the panel", `document.querySelector(".gatekeepers .action .what")?.textContent.includes("Crash on start")`)
	waitIn(t, tab, "whose session queued it", `document.querySelector(".gatekeepers .action .user")?.textContent === "by alice"`)
	// The approver sees the whole issue, as text, before deciding.
	waitIn(t, tab, "the issue's body in the action's details", `document.querySelector(".gatekeepers .action .details")?.textContent.includes("It crashes <b>at once</b>.")`)
	if w := gh.Writes(); w != 0 {
		t.Fatalf("GitHub saw %d writes before approval", w)
	}

	// GADGETD_SHELL_SCREENSHOT=$PWD/docs/shell.png makes the README's
	// picture: the gadget, its pending issue, and the action waiting.
	if path := os.Getenv("GADGETD_SHELL_SCREENSHOT"); path != "" {
		ctx := tab.(chromium).tab
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 1100)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	click(t, tab, ".gatekeepers .action button.approve")
	waitIn(t, tab, "no action waiting", `document.querySelector(".gatekeepers .pending .muted")?.textContent === "No actions wait."`)
	waitIn(t, tab, "the outcome in the audit log", `[...document.querySelectorAll(".gatekeepers .audit li")].some((li) => li.textContent.includes("Crash on start") && li.textContent.includes("created"))`)
	if title, _, _, ok := repo.Issue(2); !ok || title != "Crash on start" || gh.Writes() != 1 {
		t.Fatalf("GitHub after approval: issue #2 %q (%v), %d writes", title, ok, gh.Writes())
	}
	if users := eval[[]string](t, tab.(chromium).tab, `[...document.querySelectorAll(".gatekeepers .audit li .user")].map((u) => u.textContent)`); len(users) == 0 || slices.ContainsFunc(users, func(u string) bool { return u != "alice" }) {
		t.Errorf("the audit log names the users %q, want alice for each entry", users)
	}
	audit := eval[string](t, tab.(chromium).tab, `document.querySelector(".gatekeepers .audit").textContent`)
	if strings.Contains(audit, "ghp_") {
		t.Fatal("the audit log in the shell shows the service's token")
	}
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/examples/issues/issuespb"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubtest"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/schema"
)

// githubToken is the service's token; it is in the server's environment
// only, under the variable its configuration names.
const (
	githubToken    = "ghp_cli-test-token-no-gadget-sees"
	githubTokenEnv = "GADGETD_TEST_GITHUB_TOKEN"
)

// issuesServer is `gadgetd serve --dev` with the issues example installed
// and one github service, "gh", on a GitHub-compatible server on loopback
// holding acme/widgets.
type issuesServer struct {
	bin, data, config, examples string
	capnp, token                string
	stop                        func() // SIGKILLs the server
	github                      *githubtest.Server
	repo                        *githubtest.Repo
}

func startIssuesServer(t *testing.T) *issuesServer {
	t.Helper()
	gh := githubtest.NewServer(githubToken)
	t.Cleanup(gh.Close)
	s := &issuesServer{bin: buildBinary(t), data: t.TempDir(), github: gh, repo: gh.AddRepo("acme", "widgets")}
	s.examples = t.TempDir()
	if err := os.Symlink(blueprinttest.Example(t, "issues"), filepath.Join(s.examples, "issues")); err != nil {
		t.Fatal(err)
	}
	s.config = writeConfig(t, fmt.Sprintf(`
[services.gh]
kind = "github"
description = "the test GitHub"
api = %q
token_env = %q
allow_private_api = true
`, gh.URL, githubTokenEnv))
	t.Setenv(githubTokenEnv, githubToken) // the server inherits it
	s.start(t)
	return s
}

// start starts the server, again on the same data after a stop.
func (s *issuesServer) start(t *testing.T) {
	t.Helper()
	capnp, _, lines, cmd := startServe(t, s.bin, "--data", s.data, "--config", s.config, "--dev", "--examples", s.examples)
	s.capnp, s.token = capnp, ""
	for s.token == "" && lines.Scan() {
		if v, found := strings.CutPrefix(lines.Text(), "GADGETD_TOKEN="); found {
			s.token = v
		}
	}
	if s.token == "" {
		t.Fatal("serve --dev printed no GADGETD_TOKEN line")
	}
	s.stop = func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

func (s *issuesServer) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := gadgetd(t, s.bin, s.capnp, s.token, args...)
	if err != nil {
		t.Fatalf("gadgetd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// fileIssues files each title through the gadget's session, as its UI
// would, and returns the pending actions' ids.
func (s *issuesServer) fileIssues(t *testing.T, gadgetID string, titles ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := client.Dial(ctx, s.capnp)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ws, release := conn.Login(ctx, s.token)
	defer release()
	opened, releaseOpen := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(gadgetID) })
	defer releaseOpen()
	session, releaseSession := opened.Gadget().Open(ctx, nil)
	defer releaseSession()
	issues := issuespb.Issues(session.Session())
	var ids []string
	for _, title := range titles {
		f, release := issues.File(ctx, func(p issuespb.Issues_file_Params) error {
			if err := p.SetBody("The body of " + title + "."); err != nil {
				return err
			}
			return p.SetTitle(title)
		})
		res, err := f.Struct()
		if err != nil {
			t.Fatalf("file %q: %v", title, err)
		}
		issue, _ := res.Issue()
		id, _ := issue.ActionId()
		ids = append(ids, id)
		release()
	}
	return ids
}

// titles are the titles of the repository's issues, oldest first.
func (s *issuesServer) titles() []string {
	var out []string
	for n := 1; ; n++ {
		title, _, _, ok := s.repo.Issue(n)
		if !ok {
			return out
		}
		out = append(out, title)
	}
}

// TestTheIssuesFlowFromTheCLI: an owner lists the services, binds the
// issues gadget to a repository, sees the actions the gadget queued, approves
// one and rejects another, and reads the audit log; GitHub sees exactly the
// approved issue, and the audit log never shows the service's token.
func TestTheIssuesFlowFromTheCLI(t *testing.T) {
	s := startIssuesServer(t)
	if out := s.run(t, "services"); !strings.Contains(out, "gh") || !strings.Contains(out, "github") || !strings.Contains(out, "createIssue") {
		t.Fatalf("services:\n%s", out)
	}
	if out := s.run(t, "blueprint", "ls"); !strings.Contains(out, "repo (github)") {
		t.Fatalf("blueprint ls does not show the binding issues asks for:\n%s", out)
	}
	id := strings.TrimSpace(s.run(t, "new", "issues"))
	if out := s.run(t, "bind", id, "repo", "gh", "acme/widgets"); !strings.Contains(out, "bound repo to acme/widgets") {
		t.Fatalf("bind: %s", out)
	}
	if out := s.run(t, "bindings", id); !strings.Contains(out, "acme/widgets") {
		t.Fatalf("bindings:\n%s", out)
	}
	ids := s.fileIssues(t, id, "Approve me", "Reject me")
	out := s.run(t, "actions")
	// The whole text of what would be created, not only its title.
	for _, want := range append(ids, "pending", "by demo", "Approve me", "Reject me", "| The body of Approve me.") {
		if !strings.Contains(out, want) {
			t.Fatalf("actions does not show %q:\n%s", want, out)
		}
	}
	if w := s.github.Writes(); w != 0 {
		t.Fatalf("GitHub saw %d writes before any approval", w)
	}
	s.run(t, "approve", ids[0])
	s.run(t, "reject", ids[1])
	for end := time.Now().Add(30 * time.Second); !strings.Contains(s.run(t, "actions", "--all"), "applied"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the approved action was never applied:\n%s", s.run(t, "actions", "--all"))
		}
	}
	if got := s.titles(); strings.Join(got, "|") != "Approve me" {
		t.Fatalf("GitHub's issues: %q, want only the approved one", got)
	}
	if out := s.run(t, "actions"); strings.Contains(out, ids[1]) || strings.Contains(out, ids[0]) {
		t.Fatalf("decided actions still wait:\n%s", out)
	}
	audit := s.run(t, "audit", "-n", "100")
	// Whose each call was, by login name: the one user here.
	for _, want := range []string{"USER", "  demo  ", "create issue", "approved", "rejected", "queued for approval"} {
		if !strings.Contains(audit, want) {
			t.Errorf("the audit log does not show %q:\n%s", want, audit)
		}
	}
	if strings.Contains(audit, githubToken) {
		t.Fatal("the audit log shows the service's token")
	}
	s.run(t, "unbind", id, "repo")
	if out, err := gadgetd(t, s.bin, s.capnp, s.token, "unbind", id, "repo"); err == nil || !strings.Contains(out, "no such binding") {
		t.Fatalf("unbinding twice: %v\n%s", err, out)
	}
}

// TestApprovedActionsApplyOnceInOrderAcrossAKill9: five approved issues
// are being created, slowly, when the server is killed with SIGKILL, one
// of them after GitHub made it and before its answer arrived. Restarted on
// the same data, the server applies the rest: GitHub ends with each issue
// exactly once, in the order they were filed.
func TestApprovedActionsApplyOnceInOrderAcrossAKill9(t *testing.T) {
	s := startIssuesServer(t)
	id := strings.TrimSpace(s.run(t, "new", "issues"))
	s.run(t, "bind", id, "repo", "gh", "acme/widgets")
	titles := []string{"one", "two", "three", "four", "five"}
	s.fileIssues(t, id, titles...)
	s.github.SetWriteDelay(300 * time.Millisecond)
	s.run(t, "approve", "--all")
	for end := time.Now().Add(30 * time.Second); s.github.Writes() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("GitHub never saw two writes")
		}
	}
	s.stop() // while the second write's answer is on its way
	s.github.SetWriteDelay(0)
	s.start(t)
	for end := time.Now().Add(30 * time.Second); len(s.titles()) < len(titles); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("after the restart GitHub has %q", s.titles())
		}
	}
	time.Sleep(500 * time.Millisecond) // a duplicate would show by now
	if got := s.titles(); strings.Join(got, "|") != strings.Join(titles, "|") {
		t.Fatalf("GitHub's issues after a kill -9 in the middle: %q, want %q once each, in order", got, titles)
	}
	if out := s.run(t, "actions", "--all"); strings.Count(out, "applied") != len(titles) {
		t.Fatalf("not every action is applied:\n%s", out)
	}
}

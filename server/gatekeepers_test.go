package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/examples/issues/issuespb"
	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/desk"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubpb"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubtest"
	"github.com/gadgetd/gadgetd/gatekeepers/kinds"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

const githubToken = "ghp_test-token-the-gadget-must-never-see"

// issuesHarness is a server with the issues example installed and one
// github service, "gh", on a GitHub-compatible server on loopback that
// holds acme/widgets with one open issue.
type issuesHarness struct {
	*harness
	github *githubtest.Server
	repo   *githubtest.Repo
}

func startIssues(t *testing.T) *issuesHarness {
	t.Helper()
	gh := githubtest.NewServer(githubToken)
	t.Cleanup(gh.Close)
	repo := gh.AddRepo("acme", "widgets")
	repo.AddIssue(githubtest.Issue{Title: "It was already broken"})
	h := start(t, t.TempDir(), server.WithGatekeepers(kinds.All(), []desk.Service{{
		Name: "gh", Kind: "github",
		Config: gatekeepers.ServiceConfig{
			Description: "the test GitHub",
			Settings:    map[string]any{"api": gh.URL, "token_env": "GH_TOKEN", "allow_private_api": true},
			Getenv: func(name string) string {
				if name == "GH_TOKEN" {
					return githubToken
				}
				return ""
			},
		},
	}}))
	if _, err := h.srv.InstallBuiltin(context.Background(), blueprinttest.ExampleBundle(t, "issues")); err != nil {
		t.Fatal(err)
	}
	return &issuesHarness{harness: h, github: gh, repo: repo}
}

// requestedBindings lists the bindings blueprint asks for, "name kind"
// each, as Workspace.blueprints says.
func requestedBindings(t *testing.T, ws schema.Workspace, blueprint string) string {
	t.Helper()
	f, release := ws.Blueprints(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	list, _ := res.Blueprints()
	for i := 0; i < list.Len(); i++ {
		if name, _ := list.At(i).Name(); name != blueprint {
			continue
		}
		requests, _ := list.At(i).Bindings()
		var out []string
		for j := 0; j < requests.Len(); j++ {
			n, _ := requests.At(j).Name()
			k, _ := requests.At(j).Kind()
			out = append(out, n+" "+k)
		}
		return strings.Join(out, ", ")
	}
	t.Fatalf("no blueprint %q", blueprint)
	return ""
}

func listIssues(t *testing.T, s issuespb.Issues) ([]string, error) {
	t.Helper()
	f, release := s.List(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return nil, err
	}
	list, err := res.Issues()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := 0; i < list.Len(); i++ {
		title, _ := list.At(i).Title()
		if list.At(i).Pending() {
			title += " (pending)"
		}
		out = append(out, title)
	}
	return out, nil
}

func fileIssue(t *testing.T, s issuespb.Issues, title string) string {
	t.Helper()
	f, release := s.File(testCtx(t), func(p issuespb.Issues_file_Params) error { return p.SetTitle(title) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("file %q: %v", title, err)
	}
	issue, _ := res.Issue()
	id, _ := issue.ActionId()
	if !issue.Pending() || id == "" || issue.Number() != 0 {
		t.Fatalf("filed issue: pending %v, action %q, number %d; want a pending action, no number", issue.Pending(), id, issue.Number())
	}
	return id
}

func decideActions(t *testing.T, ws schema.Workspace, approve bool, ids ...string) {
	t.Helper()
	f, release := ws.Decide(testCtx(t), func(p schema.Workspace_decide_Params) error {
		p.SetApprove(approve)
		list, err := p.NewIds(int32(len(ids)))
		for i, id := range ids {
			list.Set(i, id)
		}
		return err
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	list, _ := res.Decisions()
	for i := 0; i < list.Len(); i++ {
		if !list.At(i).Ok() {
			reason, _ := list.At(i).Reason()
			t.Fatalf("deciding %s: %s", ids[i], reason)
		}
	}
}

func actionState(t *testing.T, ws schema.Workspace, id string) schema.ActionState {
	t.Helper()
	f, release := ws.Actions(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	list, _ := res.Actions()
	for i := 0; i < list.Len(); i++ {
		if got, _ := list.At(i).Id(); got == id {
			return list.At(i).State()
		}
	}
	t.Fatalf("no action %s in the workspace", id)
	return 0
}

func bindRepo(t *testing.T, g schema.Gadget, resource string) error {
	t.Helper()
	f, release := g.Bind(testCtx(t), func(p schema.Gadget_bind_Params) error {
		p.SetName("repo")
		p.SetService("gh")
		return p.SetResource(resource)
	})
	defer release()
	_, err := f.Struct()
	return err
}

// TestTheIssuesExampleFilesAnIssueThatWaitsForApproval is the examples/issues
// flow from a Go client: unbound, the gadget reaches nothing; bound to
// acme/widgets, it lists the repository's issues; an issue it files is
// pending, shown in its own listing, and GitHub sees nothing until the
// owner approves it, when it is created exactly once; a rejected one
// disappears; unbound again, the gadget reaches nothing again.
func TestTheIssuesExampleFilesAnIssueThatWaitsForApproval(t *testing.T) {
	h := startIssues(t)
	ws := h.login(t, h.token("alice"))
	if got := requestedBindings(t, ws, "issues"); got != "repo github" {
		t.Fatalf("the issues blueprint asks for bindings %q, want repo github", got)
	}
	g, _ := create(t, ws, "issues")
	open, release := g.Open(testCtx(t), nil)
	defer release()
	s := issuespb.Issues(open.Session())

	if _, err := listIssues(t, s); err == nil || !strings.Contains(err.Error(), `no GitHub repository bound as "repo"`) {
		t.Fatalf("an unbound gadget's list: %v", err)
	}
	if n := len(h.github.Requests()); n != 0 {
		t.Fatalf("GitHub saw %d requests from an unbound gadget", n)
	}
	if err := bindRepo(t, g, "acme/widgets"); err != nil {
		t.Fatal(err)
	}
	if got, err := listIssues(t, s); err != nil || strings.Join(got, "|") != "It was already broken" {
		t.Fatalf("list: %q, %v", got, err)
	}

	id := fileIssue(t, s, "Crash on start")
	if got, _ := listIssues(t, s); strings.Join(got, "|") != "Crash on start (pending)|It was already broken" {
		t.Fatalf("list with a pending issue: %q", got)
	}
	if w := h.github.Writes(); w != 0 {
		t.Fatalf("GitHub saw %d writes before approval", w)
	}
	if st := actionState(t, ws, id); st != schema.ActionState_pending {
		t.Fatalf("the action is %v, want pending", st)
	}

	decideActions(t, ws, true, id)
	for end := time.Now().Add(10 * time.Second); actionState(t, ws, id) != schema.ActionState_applied; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the approved action is %v, not applied", actionState(t, ws, id))
		}
	}
	if w := h.github.Writes(); w != 1 {
		t.Fatalf("GitHub saw %d writes after one approval", w)
	}
	if title, _, _, ok := h.repo.Issue(2); !ok || title != "Crash on start" {
		t.Fatalf("issue #2 on GitHub: %q, %v", title, ok)
	}
	if got, _ := listIssues(t, s); strings.Join(got, "|") != "Crash on start|It was already broken" {
		t.Fatalf("list after approval: %q", got)
	}

	rejected := fileIssue(t, s, "Not a bug")
	decideActions(t, ws, false, rejected)
	if got, _ := listIssues(t, s); strings.Join(got, "|") != "Crash on start|It was already broken" {
		t.Fatalf("list after a rejection: %q", got)
	}
	if w := h.github.Writes(); w != 1 {
		t.Fatalf("GitHub saw %d writes, want the one approved", w)
	}

	unbind, releaseUnbind := g.Unbind(testCtx(t), func(p schema.Gadget_unbind_Params) error { return p.SetName("repo") })
	defer releaseUnbind()
	if _, err := unbind.Struct(); err != nil {
		t.Fatal(err)
	}
	if _, err := listIssues(t, s); err == nil {
		t.Fatal("list succeeded after unbind")
	}
}

// TestABindingReachesOnlyItsRepository: a binding names one repository,
// and the service refuses what is not one.
func TestABindingReachesOnlyItsRepository(t *testing.T) {
	h := startIssues(t)
	ws := h.login(t, h.token("alice"))
	g, _ := create(t, ws, "issues")
	for _, bad := range []string{"acme", "acme/widgets/issues", "../acme/widgets", ""} {
		if err := bindRepo(t, g, bad); err == nil {
			t.Errorf("binding %q succeeded", bad)
		}
	}
}

// TestAnotherUserSeesNoneOfTheWorkspacesActions: bob's workspace lists
// none of alice's actions and cannot decide them.
func TestAnotherUserSeesNoneOfTheWorkspacesActions(t *testing.T) {
	h := startIssues(t)
	alice := h.login(t, h.token("alice"))
	g, _ := create(t, alice, "issues")
	if err := bindRepo(t, g, "acme/widgets"); err != nil {
		t.Fatal(err)
	}
	open, release := g.Open(testCtx(t), nil)
	defer release()
	id := fileIssue(t, issuespb.Issues(open.Session()), "Mine")

	bob := h.login(t, h.token("bob"))
	f, releaseList := bob.Actions(testCtx(t), nil)
	defer releaseList()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := res.Actions(); list.Len() != 0 {
		t.Fatalf("bob sees %d actions", list.Len())
	}
	d, releaseDecide := bob.Decide(testCtx(t), func(p schema.Workspace_decide_Params) error {
		p.SetApprove(true)
		list, err := p.NewIds(1)
		list.Set(0, id)
		return err
	})
	defer releaseDecide()
	dres, err := d.Struct()
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := dres.Decisions(); list.At(0).Ok() {
		t.Fatal("bob approved alice's action")
	}
	if st := actionState(t, alice, id); st != schema.ActionState_pending {
		t.Fatalf("alice's action is %v after bob's attempt", st)
	}
}

// actionListener records what Workspace.watchActions tells it.
type actionListener struct {
	changes  chan string   // "ID STATE"
	released chan struct{} // closed when the server lets go of it
}

func (l *actionListener) Shutdown() { close(l.released) }

func (l *actionListener) Changed(ctx context.Context, call schema.ActionListener_changed) error {
	a, err := call.Args().Action()
	if err != nil {
		return err
	}
	id, _ := a.Id()
	l.changes <- id + " " + a.State().String()
	return nil
}

func (l *actionListener) Missed(ctx context.Context, call schema.ActionListener_missed) error {
	l.changes <- "missed"
	return nil
}

func (l *actionListener) next(t *testing.T) string {
	t.Helper()
	select {
	case c := <-l.changes:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("the listener heard nothing for 10 s")
		return ""
	}
}

// TestAWatcherHearsEveryActionAndAutoApprovalSkipsTheWait: a listener
// given to watchActions hears an action queued, then, once auto-approval
// is set for its method, one queued already approved, applying and
// applied, with no polling; releasing the subscription stops it.
func TestAWatcherHearsEveryActionAndAutoApprovalSkipsTheWait(t *testing.T) {
	h := startIssues(t)
	ws := h.login(t, h.token("alice"))
	g, _ := create(t, ws, "issues")
	if err := bindRepo(t, g, "acme/widgets"); err != nil {
		t.Fatal(err)
	}
	l := &actionListener{changes: make(chan string, 100), released: make(chan struct{})}
	w, releaseWatch := ws.WatchActions(testCtx(t), func(p schema.Workspace_watchActions_Params) error {
		return p.SetListener(schema.ActionListener_ServerToClient(l))
	})
	if _, err := w.Struct(); err != nil {
		t.Fatal(err)
	}
	open, release := g.Open(testCtx(t), nil)
	defer release()
	s := issuespb.Issues(open.Session())

	held := fileIssue(t, s, "Held")
	if got := l.next(t); got != held+" pending" {
		t.Fatalf("heard %q, want %q", got, held+" pending")
	}
	auto, releaseAuto := g.SetAutoApprove(testCtx(t), func(p schema.Gadget_setAutoApprove_Params) error {
		p.SetOn(true)
		p.SetBinding("repo")
		return p.SetMethod("createIssue")
	})
	if _, err := auto.Struct(); err != nil {
		t.Fatal(err)
	}
	releaseAuto()
	// Auto-approval applies to what is queued from now on; the action
	// queued before it still waits, and holds its binding's queue.
	if st := actionState(t, ws, held); st != schema.ActionState_pending {
		t.Fatalf("the earlier action is %v", st)
	}
	decideActions(t, ws, false, held)
	if got := l.next(t); got != held+" rejected" {
		t.Fatalf("heard %q, want the rejection", got)
	}
	applied := fileIssue(t, s, "Auto")
	var heard []string
	for len(heard) == 0 || heard[len(heard)-1] != applied+" applied" {
		heard = append(heard, l.next(t))
	}
	if heard[0] != applied+" approved" {
		t.Fatalf("an auto-approved action was first heard as %q, want approved", heard[0])
	}
	if got := h.github.Writes(); got != 1 {
		t.Fatalf("GitHub saw %d writes, want the auto-approved one", got)
	}
	releaseWatch()
	// The server lets go of the listener as the subscription ends.
	select {
	case <-l.released:
	case <-time.After(10 * time.Second):
		t.Fatal("the server kept the listener after the subscription was released")
	}
	fileIssue(t, s, "Unheard")
	select {
	case c := <-l.changes:
		t.Fatalf("heard %q after releasing the subscription", c)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestAKindsSchemaCanBeFetched: a client or a blueprint author fetches a
// kind's compiled schema and source from the server, as Gadget.schema()
// gives a blueprint's; an unknown kind is an error naming the known ones.
func TestAKindsSchemaCanBeFetched(t *testing.T) {
	h := startIssues(t)
	ws := h.login(t, h.token("alice"))
	f, release := ws.GatekeeperSchema(testCtx(t), func(p schema.Workspace_gatekeeperSchema_Params) error { return p.SetKind("github") })
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	if res.InterfaceId() != githubpb.GitHub_TypeID {
		t.Fatalf("interface %#x, want githubpb.GitHub's %#x", res.InterfaceId(), uint64(githubpb.GitHub_TypeID))
	}
	nodes, _ := res.Nodes()
	ifaces, err := blueprint.Interfaces(nodes)
	if err != nil || ifaces[githubpb.GitHub_TypeID] == "" || ifaces[schema.Gatekeeper_TypeID] == "" {
		t.Fatalf("the nodes hold interfaces %v (%v), want GitHub and the Gatekeeper it extends", ifaces, err)
	}
	if src, _ := res.Source(); !strings.Contains(src, "interface GitHub extends") {
		t.Fatalf("source: %.200q", src)
	}
	bad, releaseBad := ws.GatekeeperSchema(testCtx(t), func(p schema.Workspace_gatekeeperSchema_Params) error { return p.SetKind("ftp") })
	defer releaseBad()
	if _, err := bad.Struct(); err == nil || !strings.Contains(err.Error(), `unknown gatekeeper kind "ftp"`) || !strings.Contains(err.Error(), "github") {
		t.Fatalf("an unknown kind: %v", err)
	}
}

// TestADecideOfTooManyIDsIsRefusedWhole: one decide takes at most 1000
// ids; more is refused before any is looked at.
func TestADecideOfTooManyIDsIsRefusedWhole(t *testing.T) {
	h := startIssues(t)
	ws := h.login(t, h.token("alice"))
	f, release := ws.Decide(testCtx(t), func(p schema.Workspace_decide_Params) error {
		_, err := p.NewIds(1001)
		return err
	})
	defer release()
	if _, err := f.Struct(); err == nil || !strings.Contains(err.Error(), "decide takes at most 1000 ids at once, got 1001") {
		t.Fatalf("deciding 1001 ids: %v", err)
	}
}

// TestAUsersActionSubscriptionsAreBounded: a user holds at most
// MaxActionWatchersPerUser watchActions subscriptions at once (each costs
// the server a goroutine and a buffer); the next fails, saying so, another
// user is unaffected, and releasing one makes room.
func TestAUsersActionSubscriptionsAreBounded(t *testing.T) {
	h := startIssues(t)
	ws := h.login(t, h.token("alice"))
	watch := func(ws schema.Workspace) (schema.Subscription, error) {
		l := &actionListener{changes: make(chan string, 1), released: make(chan struct{})}
		f, release := ws.WatchActions(testCtx(t), func(p schema.Workspace_watchActions_Params) error {
			return p.SetListener(schema.ActionListener_ServerToClient(l))
		})
		defer release()
		res, err := f.Struct()
		if err != nil {
			return schema.Subscription{}, err
		}
		return res.Subscription().AddRef(), nil
	}
	var subs []schema.Subscription
	for range server.MaxActionWatchersPerUser {
		s, err := watch(ws)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	if _, err := watch(ws); err == nil || !strings.Contains(err.Error(), "the most one user may hold") {
		t.Fatalf("one subscription past the bound: %v", err)
	}
	bob, err := watch(h.login(t, h.token("bob")))
	if err != nil {
		t.Fatalf("another user's subscription: %v", err)
	}
	bob.Release()
	subs[0].Release()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s, err := watch(ws)
		if err == nil {
			s.Release()
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no room after releasing a subscription: %v", err)
		}
	}
	for _, s := range subs[1:] {
		s.Release()
	}
}

package github_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/github"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubpb"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubtest"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/callstest"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/fetch"
)

// token is the service's secret. No result, error or outcome may contain it.
const token = "ghp_s3cr3tT0kenThatNoGadgetMaySee"

type env struct {
	srv   *githubtest.Server
	repo  *githubtest.Repo // octo/hello, the bound repository
	other *githubtest.Repo // octo/other, bound by no one
	svc   *github.Service
	b     gatekeepers.Binding
	calls *callstest.Calls
	gh    githubpb.GitHub
}

func settings(api string) map[string]any {
	return map[string]any{"api": api, "token_env": "GH_TOKEN", "allow_private_api": true}
}

func getenv(name string) string {
	if name == "GH_TOKEN" {
		return token
	}
	return ""
}

// newEnv starts a fake GitHub with two repositories, and binds octo/hello
// through a service whose api is apiURL(srv) (srv.URL if nil).
func newEnv(t *testing.T, apiURL func(*githubtest.Server) string, opts ...github.Option) *env {
	t.Helper()
	e := &env{srv: githubtest.NewServer(token)}
	t.Cleanup(e.srv.Close)
	e.repo = e.srv.AddRepo("octo", "hello")
	e.other = e.srv.AddRepo("octo", "other")
	e.repo.AddIssue(githubtest.Issue{Title: "Crash on start", Body: "It crashes.", Labels: []string{"bug"}})
	e.repo.AddPull(githubtest.Pull{Title: "Fix the crash"})
	e.repo.AddComment(1, "alice", "Me too.")
	e.repo.AddFile("", "docs/README.md", []byte("# Hello\n"))
	e.other.AddIssue(githubtest.Issue{Title: "Secret"})
	api := e.srv.URL
	if apiURL != nil {
		api = apiURL(e.srv)
	}
	var err error
	e.svc, err = github.NewService("gh", gatekeepers.ServiceConfig{Settings: settings(api), Getenv: getenv}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	resource, err := e.svc.Resource("octo/hello")
	if err != nil {
		t.Fatal(err)
	}
	e.b = gatekeepers.Binding{GadgetID: "g1", OwnerID: "u1", Name: "repo", Service: "gh", Kind: github.KindName, Resource: resource}
	e.calls = callstest.New(e.b)
	e.gh = githubpb.GitHub(e.svc.Gatekeeper(e.b, e.calls))
	t.Cleanup(e.gh.Release)
	return e
}

// issue is what a test looks at of a githubpb.Issue.
type issue struct {
	Number   uint32
	Title    string
	Body     string
	Labels   []string
	Pending  bool
	ActionID string
}

func readIssue(is githubpb.Issue) issue {
	labels := must(is.Labels())
	out := issue{Number: is.Number(), Title: must(is.Title()), Body: must(is.Body()), Pending: is.Pending(), ActionID: must(is.ActionId())}
	for i := 0; i < labels.Len(); i++ {
		out.Labels = append(out.Labels, must(labels.At(i)))
	}
	return out
}

func listIssues(t *testing.T, gh githubpb.GitHub, state string, page uint32) ([]issue, uint32) {
	t.Helper()
	f, release := gh.ListIssues(context.Background(), func(p githubpb.GitHub_listIssues_Params) error {
		p.SetPage(page)
		return p.SetState(state)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("listIssues: %v", err)
	}
	list := must(res.Issues())
	var out []issue
	for i := 0; i < list.Len(); i++ {
		out = append(out, readIssue(list.At(i)))
	}
	return out, res.NextPage()
}

type comment struct {
	ID       int64
	Body     string
	Pending  bool
	ActionID string
}

func listComments(t *testing.T, gh githubpb.GitHub, number, page uint32) ([]comment, uint32) {
	t.Helper()
	f, release := gh.ListComments(context.Background(), func(p githubpb.GitHub_listComments_Params) error {
		p.SetNumber(number)
		p.SetPage(page)
		return nil
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("listComments: %v", err)
	}
	list := must(res.Comments())
	var out []comment
	for i := 0; i < list.Len(); i++ {
		c := list.At(i)
		out = append(out, comment{ID: c.Id(), Body: must(c.Body()), Pending: c.Pending(), ActionID: must(c.ActionId())})
	}
	return out, res.NextPage()
}

func createIssue(gh githubpb.GitHub, title, body string, labels ...string) (issue, error) {
	f, release := gh.CreateIssue(context.Background(), func(p githubpb.GitHub_createIssue_Params) error {
		list, err := p.NewLabels(int32(len(labels)))
		if err != nil {
			return err
		}
		for i, l := range labels {
			list.Set(i, l)
		}
		return errors.Join(p.SetTitle(title), p.SetBody(body))
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return issue{}, err
	}
	return readIssue(must(res.Issue())), nil
}

func addComment(gh githubpb.GitHub, number uint32, body string) (comment, error) {
	f, release := gh.AddComment(context.Background(), func(p githubpb.GitHub_addComment_Params) error {
		p.SetNumber(number)
		return p.SetBody(body)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return comment{}, err
	}
	c := must(res.Comment())
	return comment{ID: c.Id(), Body: must(c.Body()), Pending: c.Pending(), ActionID: must(c.ActionId())}, nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestObservationsReadTheBoundRepository(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()

	issues, next := listIssues(t, e.gh, "", 0)
	if len(issues) != 1 || issues[0].Title != "Crash on start" || issues[0].Number != 1 || next != 0 {
		t.Fatalf("listIssues = %+v, next %d", issues, next)
	}
	gi, release := e.gh.GetIssue(ctx, func(p githubpb.GitHub_getIssue_Params) error { p.SetNumber(1); return nil })
	if is := must(gi.Issue().Struct()); must(is.Author()) != githubtest.AuthenticatedUser || must(is.Body()) != "It crashes." {
		t.Errorf("getIssue = %s", is)
	}
	release()
	lp, release := e.gh.ListPulls(ctx, nil)
	if pulls := must(must(lp.Struct()).Pulls()); pulls.Len() != 1 || must(pulls.At(0).Title()) != "Fix the crash" || pulls.At(0).Number() != 2 {
		t.Errorf("listPulls = %d pulls", pulls.Len())
	}
	release()
	gp, release := e.gh.GetPull(ctx, func(p githubpb.GitHub_getPull_Params) error { p.SetNumber(2); return nil })
	if p := must(gp.Pull().Struct()); must(p.Head()) == "" || must(p.Base()) == "" || p.Merged() {
		t.Errorf("getPull = %s", p)
	}
	release()
	if comments, _ := listComments(t, e.gh, 1, 0); len(comments) != 1 || comments[0].Body != "Me too." || comments[0].Pending {
		t.Errorf("listComments = %+v", comments)
	}
	rf, release := e.gh.ReadFile(ctx, func(p githubpb.GitHub_readFile_Params) error { return p.SetPath("docs/README.md") })
	if f := must(rf.File().Struct()); string(must(f.Content())) != "# Hello\n" || must(f.Name()) != "README.md" {
		t.Errorf("readFile = %s", f)
	}
	release()

	want := []string{
		"list open issues of octo/hello, page 1",
		"read issue #1 of octo/hello",
		"list open pull requests of octo/hello, page 1",
		"read pull request #2 of octo/hello",
		"list comments on #1 of octo/hello, page 1",
		`read file "docs/README.md" of octo/hello`,
	}
	if got := e.calls.Descriptions(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := e.srv.Writes(); n != 0 {
		t.Errorf("observations made %d writes", n)
	}
}

// The capability reaches the bound repository's API path and nothing else:
// no method names a repository, and what a gadget does name (a file path, a
// ref) cannot leave it; nor can a redirect.
func TestTheBindingReachesOnlyItsRepository(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	for _, path := range []string{"../other/issues", "../../octo/other/issues/1", "docs/../../other", "/etc/passwd", "a%2f..%2f..%2fother", `docs\..\..\other`} {
		rf, release := e.gh.ReadFile(ctx, func(p githubpb.GitHub_readFile_Params) error { return p.SetPath(path) })
		if _, err := rf.Struct(); err == nil {
			t.Errorf("readFile(%q) succeeded", path)
		}
		release()
	}
	listIssues(t, e.gh, "all", 0)
	listComments(t, e.gh, 1, 0)
	for _, r := range e.srv.Requests() {
		if !strings.HasPrefix(r.Path, "/repos/octo/hello/") {
			t.Errorf("a request reached %s", r.Path)
		}
	}
	for _, spec := range []string{"octo", "octo/hello/issues", "octo/../other", "../octo/other", "octo/hello?x", "octo/hel lo", "", "/octo/hello"} {
		if _, err := e.svc.Resource(spec); err == nil {
			t.Errorf("Resource(%q) is granted", spec)
		}
	}
}

func TestARedirectToAnotherRepositoryIsRefused(t *testing.T) {
	// A front for the fake GitHub that redirects issue 1 of octo/hello to
	// issue 1 of octo/other.
	var front *httptest.Server
	e := newEnv(t, func(srv *githubtest.Server) string {
		target, _ := url.Parse(srv.URL)
		proxy := httputil.NewSingleHostReverseProxy(target)
		front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/repos/octo/hello/issues/1" {
				http.Redirect(w, r, "/repos/octo/other/issues/1", http.StatusMovedPermanently)
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(front.Close)
		return front.URL
	})
	gi, release := e.gh.GetIssue(context.Background(), func(p githubpb.GitHub_getIssue_Params) error { p.SetNumber(1); return nil })
	defer release()
	_, err := gi.Struct()
	if err == nil || !strings.Contains(err.Error(), fetch.ErrOutsidePrefixes.Error()) {
		t.Fatalf("getIssue through a redirect to another repository: %v", err)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("the redirect was followed: GitHub saw %d requests", n)
	}
}

// An api whose name resolves to 127.0.0.1 is refused on the address dialled
// unless the operator set allow_private_api; and another port is another
// prefix.
func TestAnAPIOnAPrivateAddressNeedsAllowPrivateAPI(t *testing.T) {
	srv := githubtest.NewServer(token)
	defer srv.Close()
	srv.AddRepo("octo", "hello")
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	toLoopback := fetch.WithResolver(func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	api := "http://github.rebind.example:" + port
	svc, err := github.NewService("gh", gatekeepers.ServiceConfig{
		Settings: map[string]any{"api": api, "token_env": "GH_TOKEN"}, Getenv: getenv,
	}, github.WithFetchOptions(toLoopback))
	if err != nil {
		t.Fatal(err)
	}
	b := gatekeepers.Binding{Name: "repo", Kind: github.KindName, Resource: "octo/hello"}
	gh := githubpb.GitHub(svc.Gatekeeper(b, callstest.New(b)))
	defer gh.Release()
	f, release := gh.ListIssues(context.Background(), nil)
	defer release()
	if _, err := f.Struct(); err == nil || !strings.Contains(err.Error(), fetch.ErrPrivateAddress.Error()) {
		t.Fatalf("listIssues through a name resolving to 127.0.0.1: %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the loopback server saw %d requests", n)
	}
}

func TestActionsAreQueuedNotSentAndOverlaidUntilApplied(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()

	created, err := createIssue(e.gh, "Add a README", "Please.", "docs")
	if err != nil {
		t.Fatal(err)
	}
	if !created.Pending || created.ActionID == "" || created.Number != 0 || created.Title != "Add a README" {
		t.Fatalf("createIssue answered %+v, want a pending issue with an action id", created)
	}
	cm, err := addComment(e.gh, 1, "Fixed in #2.")
	if err != nil {
		t.Fatal(err)
	}
	if !cm.Pending || cm.ActionID == "" || cm.ID != 0 {
		t.Fatalf("addComment answered %+v", cm)
	}
	if n := e.srv.Writes(); n != 0 {
		t.Fatalf("actions reached GitHub (%d writes) before approval", n)
	}

	// Reads through the binding show what it was promised.
	issues, _ := listIssues(t, e.gh, "", 1)
	if len(issues) != 2 || !issues[0].Pending || issues[0].ActionID != created.ActionID || issues[0].Title != "Add a README" ||
		len(issues[0].Labels) != 1 || issues[0].Labels[0] != "docs" || issues[1].Pending {
		t.Fatalf("listIssues = %+v, want the pending issue first", issues)
	}
	if closed, _ := listIssues(t, e.gh, "closed", 1); len(closed) != 0 {
		t.Errorf("a pending issue shows among closed issues: %+v", closed)
	}
	comments, _ := listComments(t, e.gh, 1, 1)
	if len(comments) != 2 || comments[0].Pending || !comments[1].Pending || comments[1].Body != "Fixed in #2." {
		t.Fatalf("listComments = %+v, want the pending comment last", comments)
	}
	if other, _ := listComments(t, e.gh, 2, 1); len(other) != 0 {
		t.Errorf("a pending comment on #1 shows on #2: %+v", other)
	}

	// Approved and applied: made once, and the overlay gives way to the real thing.
	for _, a := range e.calls.Actions() {
		if _, err := e.svc.Apply(ctx, e.b, a); err != nil {
			t.Fatal(err)
		}
		if err := e.calls.Settle(a.ID, gatekeepers.Applied); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.srv.Writes(); n != 2 {
		t.Fatalf("GitHub saw %d writes, want 2", n)
	}
	issues, _ = listIssues(t, e.gh, "", 1)
	if len(issues) != 2 || issues[0].Pending || issues[0].Number != 3 || issues[0].Title != "Add a README" || issues[0].Body != "Please." {
		t.Fatalf("after Apply, listIssues = %+v, want the real issue #3 once, without its marker", issues)
	}
	title, body, labels, _ := e.repo.Issue(3)
	if title != "Add a README" || !strings.HasPrefix(body, "Please.") || !strings.HasSuffix(body, "<!-- gadgetd-action:"+created.ActionID+" -->") || len(labels) != 1 {
		t.Errorf("GitHub has issue #3 as %q %q %v", title, body, labels)
	}
	comments, _ = listComments(t, e.gh, 1, 1)
	if len(comments) != 2 || comments[1].Pending || comments[1].Body != "Fixed in #2." {
		t.Errorf("after Apply, listComments = %+v", comments)
	}
}

func TestARejectedActionDisappearsFromReads(t *testing.T) {
	e := newEnv(t, nil)
	created, err := createIssue(e.gh, "Spam", "")
	if err != nil {
		t.Fatal(err)
	}
	if issues, _ := listIssues(t, e.gh, "all", 0); len(issues) != 2 {
		t.Fatalf("listIssues = %+v", issues)
	}
	if err := e.calls.Settle(created.ActionID, gatekeepers.Rejected); err != nil {
		t.Fatal(err)
	}
	if issues, _ := listIssues(t, e.gh, "all", 0); len(issues) != 1 || issues[0].Pending {
		t.Errorf("after rejection, listIssues = %+v", issues)
	}
	if n := e.srv.Writes(); n != 0 {
		t.Errorf("GitHub saw %d writes", n)
	}
}

// The pending issues are on the first page of a list, not on every page.
func TestThePendingIssuesAreOnTheFirstPageOnly(t *testing.T) {
	e := newEnv(t, nil)
	for i := 0; i < 35; i++ {
		e.repo.AddIssue(githubtest.Issue{Title: "filler"})
	}
	if _, err := createIssue(e.gh, "Pending one", ""); err != nil {
		t.Fatal(err)
	}
	first, next := listIssues(t, e.gh, "", 1)
	if next != 2 || !first[0].Pending || first[0].Title != "Pending one" {
		t.Fatalf("page 1: next %d, first %+v", next, first[0])
	}
	second, next := listIssues(t, e.gh, "", 2)
	if next != 0 || len(second) == 0 {
		t.Fatalf("page 2: next %d, %d issues", next, len(second))
	}
	for _, is := range second {
		if is.Pending {
			t.Errorf("page 2 shows a pending issue: %+v", is)
		}
	}
}

func TestActionsThatGitHubWouldRefuseAreNotQueued(t *testing.T) {
	e := newEnv(t, nil)
	for name, call := range map[string]func() error{
		"an empty title":   func() error { _, err := createIssue(e.gh, " \n", "body"); return err },
		"a title too long": func() error { _, err := createIssue(e.gh, strings.Repeat("t", 257), ""); return err },
		"an issue body too long": func() error {
			_, err := createIssue(e.gh, "t", strings.Repeat("b", 65536))
			return err
		},
		"an empty label":       func() error { _, err := createIssue(e.gh, "t", "", "bug", " "); return err },
		"a label too long":     func() error { _, err := createIssue(e.gh, "t", "", strings.Repeat("l", 51)); return err },
		"a comment on issue 0": func() error { _, err := addComment(e.gh, 0, "hi"); return err },
		"an empty comment":     func() error { _, err := addComment(e.gh, 1, "  "); return err },
	} {
		if err := call(); err == nil {
			t.Errorf("%s was queued", name)
		}
	}
	if n := len(e.calls.Actions()); n != 0 {
		t.Errorf("%d actions were queued", n)
	}
}

func TestReconcileFindsAnAppliedActionByItsMarker(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	applied, err := createIssue(e.gh, "Applied", "body")
	if err != nil {
		t.Fatal(err)
	}
	unapplied, err := createIssue(e.gh, "Not applied", "")
	if err != nil {
		t.Fatal(err)
	}
	// A gadget that writes another action's marker at the end of its own
	// text does not make that action look applied: Apply's marker follows.
	forger, err := createIssue(e.gh, "Forger", "text\n\n<!-- gadgetd-action:"+unapplied.ActionID+" -->")
	if err != nil {
		t.Fatal(err)
	}
	onIssue, err := addComment(e.gh, 1, "applied comment")
	if err != nil {
		t.Fatal(err)
	}
	notOnIssue, err := addComment(e.gh, 1, "unapplied comment")
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]gatekeepers.Action{}
	for _, a := range e.calls.Actions() {
		actions[a.ID] = a
	}
	for _, id := range []string{applied.ActionID, forger.ActionID, onIssue.ActionID} {
		if _, err := e.svc.Apply(ctx, e.b, actions[id]); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]string{applied.ActionID: "created issue #3", forger.ActionID: "created issue #4", onIssue.ActionID: "commented on #1"} {
		ok, o, err := e.svc.Reconcile(ctx, e.b, actions[id])
		if err != nil || !ok || !strings.HasPrefix(o.Describe, want) {
			t.Errorf("Reconcile of an applied action = %v, %q, %v; want true, %q", ok, o.Describe, err, want)
		}
	}
	for _, id := range []string{unapplied.ActionID, notOnIssue.ActionID} {
		if ok, _, err := e.svc.Reconcile(ctx, e.b, actions[id]); err != nil || ok {
			t.Errorf("Reconcile of an action never applied = %v, %v; want false", ok, err)
		}
	}
	// Reconciled as applied, an action is not applied again: the kernel
	// trusts Reconcile, so what matters is that it said true above. GitHub
	// saw exactly the three writes.
	if n := e.srv.Writes(); n != 3 {
		t.Errorf("GitHub saw %d writes, want 3", n)
	}
}

func TestReconcileOfCommentsReadsFromTheLastPage(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	for i := 0; i < 150; i++ {
		e.repo.AddComment(1, "bob", "noise")
	}
	cm, err := addComment(e.gh, 1, "mine")
	if err != nil {
		t.Fatal(err)
	}
	a := e.calls.Actions()[0]
	if ok, _, err := e.svc.Reconcile(ctx, e.b, a); err != nil || ok {
		t.Fatalf("before Apply: Reconcile = %v, %v", ok, err)
	}
	if _, err := e.svc.Apply(ctx, e.b, a); err != nil {
		t.Fatal(err)
	}
	ok, o, err := e.svc.Reconcile(ctx, e.b, a)
	if err != nil || !ok || !strings.Contains(string(o.Result), `"commentId"`) {
		t.Fatalf("after Apply: Reconcile = %v, %s, %v (action %s)", ok, o.Result, err, cm.ActionID)
	}
}

func TestTheTokenAppearsInNoResultOrError(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	var seen []string
	record := func(v any, err error) {
		if err != nil {
			seen = append(seen, err.Error())
		}
		if s, ok := v.(interface{ String() string }); ok {
			seen = append(seen, s.String())
		}
	}
	// Results of every method.
	f1, r1 := e.gh.ListIssues(ctx, nil)
	record(f1.Struct())
	f2, r2 := e.gh.ReadFile(ctx, func(p githubpb.GitHub_readFile_Params) error { return p.SetPath("docs/README.md") })
	record(f2.Struct())
	f3, r3 := e.gh.Describe(ctx, nil)
	record(f3.Struct())
	is, err := createIssue(e.gh, "t", "b")
	record(is.Title+is.Body, err)
	defer func() { r1(); r2(); r3() }()
	for _, a := range e.calls.Actions() {
		o, err := e.svc.Apply(ctx, e.b, a)
		record(o.Describe+string(o.Result), err)
	}
	// Errors: GitHub refusing the token, a missing issue, a bad file path.
	e.srv.SetRateLimit(githubtest.PrimaryRateLimit)
	f4, r4 := e.gh.GetIssue(ctx, func(p githubpb.GitHub_getIssue_Params) error { p.SetNumber(1); return nil })
	record(f4.Struct())
	r4()
	e.srv.SetRateLimit(githubtest.NoRateLimit)
	f5, r5 := e.gh.GetIssue(ctx, func(p githubpb.GitHub_getIssue_Params) error { p.SetNumber(99); return nil })
	record(f5.Struct())
	r5()
	wrong := githubtest.NewServer("another-token")
	defer wrong.Close()
	wrong.AddRepo("octo", "hello")
	svc, err := github.NewService("gh", gatekeepers.ServiceConfig{Settings: settings(wrong.URL), Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	gh := githubpb.GitHub(svc.Gatekeeper(e.b, callstest.New(e.b)))
	defer gh.Release()
	f6, r6 := gh.ListIssues(ctx, nil)
	_, err = f6.Struct()
	r6()
	if err == nil {
		t.Fatal("a wrong token was accepted")
	}
	record(nil, err)
	record(nil, errors.New(svc.String()+e.svc.String()))
	_, err = github.NewService("gh", gatekeepers.ServiceConfig{Settings: settings("ftp://x"), Getenv: getenv})
	record(nil, err)
	for _, spec := range []string{"octo", "octo/a/b", "bad owner/x"} {
		_, err = e.svc.Resource(spec)
		record(nil, err)
	}
	bad := e.b
	bad.Resource = "octo"
	badGH := githubpb.GitHub(e.svc.Gatekeeper(bad, callstest.New(bad)))
	defer badGH.Release()
	f7, r7 := badGH.ListIssues(ctx, nil)
	record(f7.Struct())
	r7()
	_, err = e.svc.Apply(ctx, bad, e.calls.Actions()[0])
	record(nil, err)
	_, _, err = e.svc.Reconcile(ctx, bad, e.calls.Actions()[0])
	record(nil, err)
	record(nil, fmt.Errorf("%v %+v %#v", e.svc, e.svc, e.svc))

	for _, s := range seen {
		if strings.Contains(s, token) || strings.Contains(s, token[4:20]) {
			t.Errorf("the token appears in %q", s)
		}
	}
	if len(seen) < 10 {
		t.Errorf("only %d results and errors were checked", len(seen))
	}
	// It was sent, to GitHub, in the Authorization header.
	if r := e.srv.Requests(); len(r) == 0 || r[0].Header.Get("Authorization") != "Bearer "+token {
		t.Errorf("GitHub did not receive the token")
	}
}

func TestConfigurationErrorsAreClear(t *testing.T) {
	env := func(string) string { return "" }
	for name, tc := range map[string]struct {
		settings map[string]any
		getenv   func(string) string
		want     string
	}{
		"no token_env":               {map[string]any{}, getenv, "token_env: required"},
		"the token variable unset":   {map[string]any{"token_env": "GH_TOKEN"}, env, "GH_TOKEN is not set"},
		"no environment":             {map[string]any{"token_env": "GH_TOKEN"}, nil, "no environment"},
		"api not a URL":              {map[string]any{"token_env": "GH_TOKEN", "api": "ftp://x"}, getenv, "base URL"},
		"api with credentials":       {map[string]any{"token_env": "GH_TOKEN", "api": "https://u:p@x"}, getenv, "credentials"},
		"allow_private_api not bool": {map[string]any{"token_env": "GH_TOKEN", "allow_private_api": "yes"}, getenv, "not true or false"},
		"an unknown setting":         {map[string]any{"token_env": "GH_TOKEN", "token": "x"}, getenv, "unknown setting token"},
	} {
		_, err := github.NewService("gh", gatekeepers.ServiceConfig{Settings: tc.settings, Getenv: tc.getenv})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"gh"`) {
			t.Errorf("%s: err = %v, want one naming the service and %q", name, err, tc.want)
		}
	}
}

func TestDescribeNamesTheBinding(t *testing.T) {
	e := newEnv(t, nil)
	f, release := e.gh.Describe(context.Background(), nil)
	defer release()
	d := must(must(f.Struct()).Description())
	if must(d.Kind()) != "github" || must(d.Resource()) != "octo/hello" || must(d.BindingName()) != "repo" {
		t.Errorf("describe = %s", d)
	}
}

// A capability made for a binding outside the service (an invalid
// repository name) fails every call.
func TestABindingTheServiceDoesNotGrantReachesNothing(t *testing.T) {
	e := newEnv(t, nil)
	b := e.b
	b.Resource = "octo/hello/../other"
	gh := githubpb.GitHub(e.svc.Gatekeeper(b, callstest.New(b)))
	defer gh.Release()
	f, release := gh.ListIssues(context.Background(), nil)
	defer release()
	if _, err := f.Struct(); err == nil {
		t.Fatal("listIssues succeeded")
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("GitHub saw %d requests", n)
	}
}

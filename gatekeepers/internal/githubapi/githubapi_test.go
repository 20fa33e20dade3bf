package githubapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/gatekeepers/github/githubtest"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/fetch"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/githubapi"
)

const testToken = "ghp_TestToken0123456789abcdefghijKLMN"

// setup starts a fake GitHub with the repository octo/hello and returns a
// client for it.
func setup(t *testing.T) (*githubtest.Server, *githubtest.Repo, *githubapi.Client) {
	t.Helper()
	srv := githubtest.NewServer(testToken)
	t.Cleanup(srv.Close)
	repo := srv.AddRepo("octo", "hello")
	return srv, repo, newClient(t, srv.URL, "octo", "hello", testToken)
}

func newClient(t *testing.T, base, owner, repo, token string) *githubapi.Client {
	t.Helper()
	c, err := githubapi.New(base, owner, repo, token, githubapi.WithAllowPrivateBase())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func numbers[T any](items []T, number func(T) int) []int {
	var ns []int
	for _, it := range items {
		ns = append(ns, number(it))
	}
	return ns
}

func issueNumber(is githubapi.Issue) int { return is.Number }

func TestListIssuesLeavesOutPullRequests(t *testing.T) {
	_, repo, c := setup(t)
	ctx := context.Background()
	repo.AddIssue(githubtest.Issue{Title: "one"})
	repo.AddPull(githubtest.Pull{Title: "two"})
	repo.AddIssue(githubtest.Issue{Title: "three"})

	issues, _, err := c.ListIssues(ctx, githubapi.StateAll, githubapi.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := numbers(issues, issueNumber); !slices.Equal(got, []int{3, 1}) {
		t.Errorf("ListIssues numbers = %v, want [3 1] (the pull request #2 left out)", got)
	}
	// The pull request exists and is readable as what it is.
	pulls, _, err := c.ListPulls(ctx, githubapi.StateAll, githubapi.ListOptions{})
	if err != nil || len(pulls) != 1 || pulls[0].Number != 2 {
		t.Fatalf("ListPulls = %+v, %v; want #2", pulls, err)
	}
	is, err := c.GetIssue(ctx, 2)
	if err != nil || !is.IsPullRequest {
		t.Errorf("GetIssue(2) = %+v, %v; want the pull request, marked IsPullRequest", is, err)
	}
}

func TestIssuesAndPullRequestsShareOneSequenceOfNumbers(t *testing.T) {
	_, repo, c := setup(t)
	if n := repo.AddIssue(githubtest.Issue{Title: "a"}); n != 1 {
		t.Errorf("first issue is #%d", n)
	}
	if n := repo.AddPull(githubtest.Pull{Title: "b"}); n != 2 {
		t.Errorf("first pull request is #%d", n)
	}
	is, err := c.CreateIssue(context.Background(), "c", "", nil)
	if err != nil || is.Number != 3 {
		t.Errorf("CreateIssue = %+v, %v; want #3", is, err)
	}
}

func TestGetIssueReturnsWhatAUIShows(t *testing.T) {
	_, repo, c := setup(t)
	ctx := context.Background()
	n := repo.AddIssue(githubtest.Issue{Title: "Crash on start", Body: "It crashes.", User: "alice", Labels: []string{"bug", "p1"}})
	repo.AddComment(n, "bob", "me too")

	is, err := c.GetIssue(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if is.Number != n || is.Title != "Crash on start" || is.Body != "It crashes." || is.State != "open" ||
		is.User.Login != "alice" || is.Comments != 1 || is.IsPullRequest {
		t.Errorf("GetIssue = %+v", is)
	}
	if !strings.HasSuffix(is.HTMLURL, "/octo/hello/issues/1") {
		t.Errorf("HTMLURL = %q", is.HTMLURL)
	}
	if len(is.Labels) != 2 || is.Labels[0].Name != "bug" || is.Labels[1].Name != "p1" {
		t.Errorf("Labels = %+v", is.Labels)
	}
	if time.Since(is.CreatedAt) > time.Hour || is.UpdatedAt.Before(is.CreatedAt) || !is.ClosedAt.IsZero() {
		t.Errorf("times: created %v updated %v closed %v", is.CreatedAt, is.UpdatedAt, is.ClosedAt)
	}
}

func TestListIssuesSelectsByState(t *testing.T) {
	_, repo, c := setup(t)
	ctx := context.Background()
	repo.AddIssue(githubtest.Issue{Title: "open"})
	repo.AddIssue(githubtest.Issue{Title: "closed", State: "closed"})

	for state, want := range map[githubapi.State][]int{
		"":                    {1},
		githubapi.StateOpen:   {1},
		githubapi.StateClosed: {2},
		githubapi.StateAll:    {2, 1},
	} {
		issues, _, err := c.ListIssues(ctx, state, githubapi.ListOptions{})
		if err != nil {
			t.Fatalf("state %q: %v", state, err)
		}
		if got := numbers(issues, issueNumber); !slices.Equal(got, want) {
			t.Errorf("state %q: got %v, want %v", state, got, want)
		}
	}
	if _, _, err := c.ListIssues(ctx, "everything", githubapi.ListOptions{}); !errors.Is(err, githubapi.ErrInvalidInput) {
		t.Errorf("state \"everything\": err = %v, want ErrInvalidInput", err)
	}
}

func TestListIssuesPaginatesByPageNumberAndNeverFollowsLinkURLs(t *testing.T) {
	srv, repo, c := setup(t)
	ctx := context.Background()
	for i := range 7 {
		repo.AddIssue(githubtest.Issue{Title: fmt.Sprint("issue ", i+1)})
	}
	var got []int
	opt := githubapi.ListOptions{PerPage: 3}
	for page := 1; page != 0; {
		opt.Page = page
		issues, p, err := c.ListIssues(ctx, githubapi.StateOpen, opt)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if p.Last != 3 && p.Next != 0 {
			t.Errorf("page %d: Last = %d, want 3", page, p.Last)
		}
		got = append(got, numbers(issues, issueNumber)...)
		page = p.Next
	}
	if want := []int{7, 6, 5, 4, 3, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("all pages = %v, want %v", got, want)
	}
	for _, r := range srv.Requests() {
		if r.Path != "/repos/octo/hello/issues" {
			t.Errorf("request to %s: the client left the repository's path", r.Path)
		}
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestListOptionsOutOfRangeAreRefusedBeforeSending(t *testing.T) {
	srv, _, c := setup(t)
	ctx := context.Background()
	for _, opt := range []githubapi.ListOptions{{PerPage: 101}, {PerPage: -1}, {Page: -1}} {
		if _, _, err := c.ListIssues(ctx, "", opt); !errors.Is(err, githubapi.ErrInvalidInput) {
			t.Errorf("%+v: err = %v, want ErrInvalidInput", opt, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

func TestGetPullReturnsBranchesDraftAndMerged(t *testing.T) {
	_, repo, c := setup(t)
	ctx := context.Background()
	open := repo.AddPull(githubtest.Pull{Title: "WIP", Head: "topic", Draft: true, User: "carol"})
	merged := repo.AddPull(githubtest.Pull{Title: "Done", Merged: true})
	repo.AddComment(open, "", "looks good")

	p, err := c.GetPull(ctx, open)
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "WIP" || p.State != "open" || !p.Draft || p.Merged || p.Head.Ref != "topic" ||
		p.Base.Ref != githubtest.DefaultBranch || p.User.Login != "carol" || p.Comments != 1 || p.HTMLURL == "" {
		t.Errorf("GetPull(open) = %+v", p)
	}
	p, err = c.GetPull(ctx, merged)
	if err != nil || !p.Merged || p.State != "closed" || p.MergedAt.IsZero() {
		t.Errorf("GetPull(merged) = %+v, %v", p, err)
	}
	// Lists carry merged_at but not "merged": Merged is derived from it.
	pulls, _, err := c.ListPulls(ctx, githubapi.StateClosed, githubapi.ListOptions{})
	if err != nil || len(pulls) != 1 || !pulls[0].Merged {
		t.Errorf("ListPulls(closed) = %+v, %v", pulls, err)
	}
}

func TestGetPullOfAnIssueIsNotFound(t *testing.T) {
	_, repo, c := setup(t)
	n := repo.AddIssue(githubtest.Issue{Title: "an issue"})
	if _, err := c.GetPull(context.Background(), n); !errors.Is(err, githubapi.ErrNotFound) {
		t.Errorf("GetPull(issue) err = %v, want ErrNotFound", err)
	}
}

func TestCommentsAreListedOldestFirstAndCreated(t *testing.T) {
	srv, repo, c := setup(t)
	ctx := context.Background()
	n := repo.AddIssue(githubtest.Issue{Title: "discuss"})
	repo.AddComment(n, "alice", "first")

	cm, err := c.CreateComment(ctx, n, "second")
	if err != nil {
		t.Fatal(err)
	}
	if cm.Body != "second" || cm.User.Login != githubtest.AuthenticatedUser || cm.ID == 0 || cm.HTMLURL == "" {
		t.Errorf("CreateComment = %+v", cm)
	}
	comments, _, err := c.ListComments(ctx, n, githubapi.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(comments) != 2 || comments[0].Body != "first" || comments[0].User.Login != "alice" || comments[1].Body != "second" {
		t.Errorf("ListComments = %+v", comments)
	}
	if is, err := c.GetIssue(ctx, n); err != nil || is.Comments != 2 {
		t.Errorf("comment count = %+v, %v; want 2", is, err)
	}
	if srv.Writes() != 1 {
		t.Errorf("Writes = %d, want 1", srv.Writes())
	}
	if _, err := c.CreateComment(ctx, 99, "to nothing"); !errors.Is(err, githubapi.ErrNotFound) {
		t.Errorf("comment on #99: %v, want ErrNotFound", err)
	}
}

func TestCreateIssueSendsTitleBodyAndLabelsOnce(t *testing.T) {
	srv, repo, c := setup(t)
	is, err := c.CreateIssue(context.Background(), "New bug", "Steps: ...", []string{"bug"})
	if err != nil {
		t.Fatal(err)
	}
	if is.Title != "New bug" || is.Body != "Steps: ..." || is.State != "open" || len(is.Labels) != 1 || is.Labels[0].Name != "bug" {
		t.Errorf("CreateIssue = %+v", is)
	}
	title, body, labels, ok := repo.Issue(is.Number)
	if !ok || title != "New bug" || body != "Steps: ..." || !slices.Equal(labels, []string{"bug"}) {
		t.Errorf("stored: %q %q %v %v", title, body, labels, ok)
	}
	if srv.Writes() != 1 {
		t.Errorf("Writes = %d, want 1", srv.Writes())
	}
}

func TestGetFileDecodesContentAtARef(t *testing.T) {
	_, repo, c := setup(t)
	ctx := context.Background()
	long := bytes.Repeat([]byte("0123456789abcdef\n"), 100) // base64 spans many of GitHub's 60-column lines
	repo.AddFile("", "README.md", []byte("# hello\n"))
	repo.AddFile("", "docs/a b/ü #1?.md", long)
	repo.AddFile("v2", "README.md", []byte("# hello v2\n"))

	f, err := c.GetFile(ctx, "README.md", "")
	if err != nil || string(f.Content) != "# hello\n" || f.Size != 8 || f.Name != "README.md" || f.SHA == "" {
		t.Errorf("GetFile(README.md) = %+v, %v", f, err)
	}
	// Each segment is escaped: unescaped, "#" and "?" would cut the path.
	f, err = c.GetFile(ctx, "docs/a b/ü #1?.md", "")
	if err != nil || !bytes.Equal(f.Content, long) || f.Path != "docs/a b/ü #1?.md" {
		t.Errorf("GetFile(docs/a b/ü #1?.md) = %v", err)
	}
	f, err = c.GetFile(ctx, "README.md", "v2")
	if err != nil || string(f.Content) != "# hello v2\n" {
		t.Errorf("GetFile(README.md, v2) = %+v, %v", f, err)
	}
	if _, err := c.GetFile(ctx, "README.md", "no-such-branch"); !errors.Is(err, githubapi.ErrNotFound) {
		t.Errorf("unknown ref: %v, want ErrNotFound", err)
	}
	if _, err := c.GetFile(ctx, "nothing.txt", ""); !errors.Is(err, githubapi.ErrNotFound) {
		t.Errorf("missing file: %v, want ErrNotFound", err)
	}
}

func TestGetFileOfADirectoryIsNotAFile(t *testing.T) {
	_, repo, c := setup(t)
	repo.AddFile("", "src/main.go", []byte("package main\n"))
	_, err := c.GetFile(context.Background(), "src", "")
	if !errors.Is(err, githubapi.ErrNotAFile) || !strings.Contains(err.Error(), "directory") {
		t.Errorf("GetFile(src) err = %v, want ErrNotAFile saying directory", err)
	}
}

func TestGetFileOverOneMegabyteIsTooLarge(t *testing.T) {
	_, repo, c := setup(t)
	repo.AddFile("", "big.bin", make([]byte, 1<<20+1))
	repo.AddFile("", "limit.bin", make([]byte, 1<<20))
	ctx := context.Background()
	if _, err := c.GetFile(ctx, "big.bin", ""); !errors.Is(err, githubapi.ErrFileTooLarge) {
		t.Errorf("GetFile(big.bin) err = %v, want ErrFileTooLarge", err)
	}
	if f, err := c.GetFile(ctx, "limit.bin", ""); err != nil || len(f.Content) != 1<<20 {
		t.Errorf("GetFile(limit.bin) = %v; a file of exactly 1 MiB is returned", err)
	}
}

// A path that climbs out of contents/ would, after dot-segment resolution,
// still be under the repository's prefix (here: its issue list), so fetch
// alone would send it. GetFile must refuse it itself.
func TestGetFileRefusesPathInjection(t *testing.T) {
	srv, repo, c := setup(t)
	repo.AddIssue(githubtest.Issue{Title: "secret"})
	repo.AddFile("", "a/b.txt", []byte("b"))
	for _, p := range []string{
		"x/../../issues", "../issues", "a/./b.txt", "/a/b.txt", "a/b.txt/", "a//b.txt",
		`a\..\..\issues`, "a/b\x00.txt", "a/\nb.txt", "", strings.Repeat("a/", 2049) + "b",
	} {
		_, err := c.GetFile(context.Background(), p, "")
		if !errors.Is(err, githubapi.ErrInvalidInput) {
			t.Errorf("GetFile(%q) err = %v, want ErrInvalidInput", p, err)
		}
	}
	if _, err := c.GetFile(context.Background(), "a/b.txt", strings.Repeat("r", 256)); !errors.Is(err, githubapi.ErrInvalidInput) {
		t.Errorf("256-byte ref: %v, want ErrInvalidInput", err)
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Errorf("%d requests reached the server, first %s", len(reqs), reqs[0].Path)
	}
}

func TestNewRefusesOwnersAndNamesOutsideGitHubsCharacters(t *testing.T) {
	for _, tc := range []struct{ owner, repo string }{
		{"octo/../evil", "hello"}, {"octo", "../evil"}, {"octo", ".."}, {"octo", "."},
		{"octo", "hello/issues"}, {"octo", "hello?x=1"}, {"octo", "hello#x"}, {"octo", "a%2fb"},
		{"", "hello"}, {"octo", ""}, {"-octo", "hello"}, {"oc to", "hello"},
		{strings.Repeat("o", 40), "hello"}, {"octo", strings.Repeat("r", 101)},
	} {
		_, err := githubapi.New("https://api.github.com", tc.owner, tc.repo, testToken)
		if !errors.Is(err, githubapi.ErrInvalidInput) {
			t.Errorf("New(%q, %q) err = %v, want ErrInvalidInput", tc.owner, tc.repo, err)
		}
	}
	for _, base := range []string{"ftp://api.github.com", "api.github.com", "https://user:pw@api.github.com", "https://api.github.com/?x=1"} {
		if _, err := githubapi.New(base, "octo", "hello", testToken); !errors.Is(err, githubapi.ErrInvalidInput) {
			t.Errorf("New(base %q) err = %v, want ErrInvalidInput", base, err)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("New(base %q) error shows the credentials: %v", base, err)
		}
	}
	for _, ok := range []struct{ owner, repo string }{{"octo-cat", "hello.go"}, {"a", "_x-y.z"}, {"emu_user", "r"}} {
		if _, err := githubapi.New("https://api.github.com", ok.owner, ok.repo, testToken); err != nil {
			t.Errorf("New(%q, %q): %v", ok.owner, ok.repo, err)
		}
	}
}

func TestIssueNumbersMustBePositive(t *testing.T) {
	srv, _, c := setup(t)
	ctx := context.Background()
	for _, n := range []int{0, -1} {
		if _, err := c.GetIssue(ctx, n); !errors.Is(err, githubapi.ErrInvalidInput) {
			t.Errorf("GetIssue(%d): %v", n, err)
		}
		if _, err := c.GetPull(ctx, n); !errors.Is(err, githubapi.ErrInvalidInput) {
			t.Errorf("GetPull(%d): %v", n, err)
		}
		if _, _, err := c.ListComments(ctx, n, githubapi.ListOptions{}); !errors.Is(err, githubapi.ErrInvalidInput) {
			t.Errorf("ListComments(%d): %v", n, err)
		}
		if _, err := c.CreateComment(ctx, n, "x"); !errors.Is(err, githubapi.ErrInvalidInput) {
			t.Errorf("CreateComment(%d): %v", n, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

func TestRequestsCarryTheTokenAndGitHubsHeaders(t *testing.T) {
	srv, repo, c := setup(t)
	repo.AddIssue(githubtest.Issue{Title: "x"})
	if _, err := c.GetIssue(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	h := reqs[0].Header
	for name, want := range map[string]string{
		"Authorization":        "Bearer " + testToken,
		"Accept":               "application/vnd.github+json",
		"X-GitHub-Api-Version": "2022-11-28",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if !reqs[0].Authorized || h.Get("User-Agent") == "" {
		t.Errorf("Authorized = %v, User-Agent = %q", reqs[0].Authorized, h.Get("User-Agent"))
	}
}

func TestABadTokenIsUnauthorizedAndAppearsNowhere(t *testing.T) {
	srv, _, _ := setup(t)
	const wrong = "ghp_WrongToken9876543210zyxwvutsrq"
	c := newClient(t, srv.URL, "octo", "hello", wrong)
	_, _, err := c.ListIssues(context.Background(), "", githubapi.ListOptions{})
	var apiErr *githubapi.APIError
	if !errors.Is(err, githubapi.ErrUnauthorized) || !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Message != "Bad credentials" {
		t.Fatalf("err = %v, want 401 Bad credentials", err)
	}
	for _, s := range []string{err.Error(), fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprintf("%s", c)} {
		if strings.Contains(s, wrong) {
			t.Errorf("the token appears in %q", s)
		}
	}
}

// echoServer answers every request with status and a GitHub error body whose
// message and errors repeat the request's Authorization header: a server that
// tries to get the token into logs.
func echoServer(t *testing.T, status int, header http.Header) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range header {
			w.Header()[k] = vs
		}
		w.WriteHeader(status)
		auth := r.Header.Get("Authorization")
		fmt.Fprintf(w, `{"message":"you sent %s","errors":[{"resource":"Issue","field":"%s","code":"x"},"%s"]}`, auth, auth, auth)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestTheTokenEchoedByTheServerIsRedactedFromErrors(t *testing.T) {
	srv := echoServer(t, http.StatusUnprocessableEntity, nil)
	c := newClient(t, srv.URL, "octo", "hello", testToken)
	_, err := c.CreateIssue(context.Background(), "t", "", nil)
	if !errors.Is(err, githubapi.ErrValidation) {
		t.Fatalf("err = %v, want ErrValidation", err)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Errorf("the token appears in the error: %v", err)
	}
	if !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("error %q does not show where the token was", err)
	}
}

func TestGitHubsErrorTextIsBoundedAndCleaned(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		msg := strings.Repeat("\\u001b[31mred\\n", 2000)
		errs := strings.Repeat(`{"resource":"Issue","field":"title","code":"`+strings.Repeat("c", 500)+`"},`, 100)
		fmt.Fprintf(w, `{"message":"%s","errors":[%s{}]}`, msg, errs)
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL, "octo", "hello", testToken)
	_, err := c.GetIssue(context.Background(), 1)
	if !errors.Is(err, githubapi.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	if len(msg) > 1200 {
		t.Errorf("error is %d bytes; GitHub's text must be bounded", len(msg))
	}
	if strings.ContainsAny(msg, "\x1b\n") {
		t.Errorf("error contains control characters: %q", msg)
	}
}

func TestANonJSONErrorStillSaysTheStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html>bad gateway</html>")
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL, "octo", "hello", testToken)
	_, err := c.GetIssue(context.Background(), 1)
	var apiErr *githubapi.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 502 || !strings.Contains(err.Error(), "answered 502: Bad Gateway") {
		t.Errorf("err = %v", err)
	}
}

func TestRateLimitsAreTold(t *testing.T) {
	srv, repo, c := setup(t)
	ctx := context.Background()
	repo.AddIssue(githubtest.Issue{Title: "x"})

	srv.SetRateLimit(githubtest.PrimaryRateLimit)
	_, err := c.GetIssue(ctx, 1)
	var apiErr *githubapi.APIError
	if !errors.Is(err, githubapi.ErrRateLimited) || errors.Is(err, githubapi.ErrForbidden) || !errors.As(err, &apiErr) {
		t.Fatalf("primary: err = %v, want ErrRateLimited", err)
	}
	if apiErr.StatusCode != 403 || apiErr.Reset.IsZero() || !strings.Contains(err.Error(), "rate limited until") {
		t.Errorf("primary: %+v", apiErr)
	}

	srv.SetRateLimit(githubtest.SecondaryRateLimit)
	_, err = c.GetIssue(ctx, 1)
	if !errors.Is(err, githubapi.ErrRateLimited) || !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.RetryAfter != time.Minute {
		t.Errorf("secondary: err = %v, want 429 with Retry-After 60 s", err)
	}

	srv.SetRateLimit(githubtest.NoRateLimit)
	if _, err := c.GetIssue(ctx, 1); err != nil {
		t.Errorf("after the limit: %v", err)
	}
}

func TestA403WithoutRateLimitHeadersIsForbiddenNotRateLimited(t *testing.T) {
	srv := echoServer(t, http.StatusForbidden, http.Header{"X-Ratelimit-Remaining": {"4999"}})
	c := newClient(t, srv.URL, "octo", "hello", testToken)
	_, err := c.GetIssue(context.Background(), 1)
	if !errors.Is(err, githubapi.ErrForbidden) || errors.Is(err, githubapi.ErrRateLimited) {
		t.Errorf("err = %v, want ErrForbidden only", err)
	}
}

func TestUnknownRepositoriesAndIssuesAreNotFound(t *testing.T) {
	srv, _, c := setup(t)
	ctx := context.Background()
	other := newClient(t, srv.URL, "octo", "nope", testToken)
	if _, _, err := other.ListIssues(ctx, "", githubapi.ListOptions{}); !errors.Is(err, githubapi.ErrNotFound) {
		t.Errorf("unknown repository: %v, want ErrNotFound", err)
	}
	if _, err := c.GetIssue(ctx, 99); !errors.Is(err, githubapi.ErrNotFound) || !strings.Contains(err.Error(), "404: Not Found") {
		t.Errorf("unknown issue: %v, want 404 Not Found", err)
	}
}

func TestEmptyTitleOrCommentIsAValidationError(t *testing.T) {
	srv, repo, c := setup(t)
	ctx := context.Background()
	_, err := c.CreateIssue(ctx, "", "body", nil)
	var apiErr *githubapi.APIError
	if !errors.Is(err, githubapi.ErrValidation) || !errors.As(err, &apiErr) || len(apiErr.Errors) != 1 || apiErr.Errors[0].Field != "title" {
		t.Fatalf("empty title: err = %v, want 422 naming the title", err)
	}
	if !strings.Contains(err.Error(), "422: Validation Failed (Issue.title: missing_field)") {
		t.Errorf("error text: %v", err)
	}
	if _, _, _, ok := repo.Issue(1); ok {
		t.Error("an issue was created")
	}
	n := repo.AddIssue(githubtest.Issue{Title: "x"})
	if _, err := c.CreateComment(ctx, n, " "); !errors.Is(err, githubapi.ErrValidation) {
		t.Errorf("blank comment: %v, want ErrValidation", err)
	}
	if srv.Writes() != 2 {
		t.Errorf("Writes = %d, want 2 (both attempts logged)", srv.Writes())
	}
}

func TestALoopbackBaseNeedsWithAllowPrivateBase(t *testing.T) {
	srv, _, _ := setup(t)
	c, err := githubapi.New(srv.URL, "octo", "hello", testToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ListIssues(context.Background(), "", githubapi.ListOptions{}); !errors.Is(err, fetch.ErrPrivateAddress) {
		t.Errorf("err = %v, want fetch.ErrPrivateAddress", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the loopback server", n)
	}
}

func TestAnEmptyTokenSendsNoAuthorization(t *testing.T) {
	srv, _, _ := setup(t)
	c := newClient(t, srv.URL, "octo", "hello", "")
	_, _, err := c.ListIssues(context.Background(), "", githubapi.ListOptions{})
	if !errors.Is(err, githubapi.ErrUnauthorized) || !strings.Contains(err.Error(), "Requires authentication") {
		t.Errorf("err = %v, want 401 Requires authentication", err)
	}
	if h := srv.Requests()[0].Header; h.Get("Authorization") != "" {
		t.Errorf("Authorization = %q", h.Get("Authorization"))
	}
}

func TestATokenThatCannotBeAHeaderIsRefusedWithoutShowingIt(t *testing.T) {
	_, err := githubapi.New("https://api.github.com", "octo", "hello", "ghp_abc\r\nX-Evil: 1")
	if !errors.Is(err, githubapi.ErrInvalidInput) || strings.Contains(err.Error(), "ghp_abc") {
		t.Errorf("err = %v, want ErrInvalidInput without the token", err)
	}
}

func TestFetchOptionsBoundTheAnswer(t *testing.T) {
	srv, repo, _ := setup(t)
	repo.AddFile("", "f.txt", bytes.Repeat([]byte("x"), 4096))
	c, err := githubapi.New(srv.URL, "octo", "hello", testToken,
		githubapi.WithAllowPrivateBase(), githubapi.WithFetchOptions(fetch.WithMaxResponseBytes(1024)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetFile(context.Background(), "f.txt", ""); !errors.Is(err, fetch.ErrTooLarge) {
		t.Errorf("err = %v, want fetch.ErrTooLarge", err)
	}
}

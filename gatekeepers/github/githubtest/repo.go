package githubtest

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultBranch is the branch GetContents reads when no ref is given.
const DefaultBranch = "main"

// largeFile is the size above which the contents API answers with encoding
// "none" and no content, as GitHub does for files over 1 MB.
const largeFile = 1 << 20

// Repo is one repository of a Server. Its methods are safe for concurrent use.
type Repo struct {
	srv         *Server
	id          int64
	owner, name string
	nextNumber  int           // shared by issues and pull requests, as on GitHub
	items       map[int]*item // by number
	comments    map[int][]*comment
	files       map[string]map[string][]byte // ref -> path -> content
}

// Issue seeds an issue.
type Issue struct {
	Title, Body string
	// State is "open" (the default) or "closed".
	State string
	// User is the author's login; AuthenticatedUser if empty.
	User   string
	Labels []string
}

// Pull seeds a pull request.
type Pull struct {
	Title, Body string
	// State is "open" (the default) or "closed". A merged pull request is
	// closed whatever State says.
	State string
	// User is the author's login; AuthenticatedUser if empty.
	User   string
	Labels []string
	// Head and Base are branch names; "feature" and DefaultBranch if empty.
	Head, Base    string
	Draft, Merged bool
}

type item struct {
	id                 int64
	number             int
	title, body, state string
	user               string
	labels             []string
	created, updated   time.Time
	closed             *time.Time
	pull               bool
	head, base         string
	draft              bool
	merged             *time.Time
	commentCount       int
	stateReason        *string
}

type comment struct {
	id               int64
	issue            int
	body, user       string
	created, updated time.Time
}

// AddRepo creates the repository owner/name and returns it.
func (s *Server) AddRepo(owner, name string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextRepo++
	r := &Repo{
		srv: s, id: s.nextRepo, owner: owner, name: name,
		items:    map[int]*item{},
		comments: map[int][]*comment{},
		files:    map[string]map[string][]byte{DefaultBranch: {}},
	}
	s.repos = append(s.repos, r)
	return r
}

// ID is the repository's numeric id, as in /repositories/{id}/.
func (r *Repo) ID() int64 { return r.id }

// AddIssue adds an issue and returns its number.
func (r *Repo) AddIssue(seed Issue) int {
	r.srv.mu.Lock()
	defer r.srv.mu.Unlock()
	it := r.newItem(seed.Title, seed.Body, seed.User, seed.Labels)
	r.setState(it, seed.State)
	return it.number
}

// AddPull adds a pull request and returns its number.
func (r *Repo) AddPull(seed Pull) int {
	r.srv.mu.Lock()
	defer r.srv.mu.Unlock()
	it := r.newItem(seed.Title, seed.Body, seed.User, seed.Labels)
	it.pull, it.draft = true, seed.Draft
	it.head, it.base = cmp(seed.Head, "feature"), cmp(seed.Base, DefaultBranch)
	r.setState(it, seed.State)
	if seed.Merged {
		r.setState(it, "closed")
		it.merged = it.closed
	}
	return it.number
}

// AddComment adds a comment by user (AuthenticatedUser if empty) to issue or
// pull request number and returns its id. It panics if there is no such
// number: a mistake in the test.
func (r *Repo) AddComment(number int, user, body string) int64 {
	r.srv.mu.Lock()
	defer r.srv.mu.Unlock()
	it := r.items[number]
	if it == nil {
		panic(fmt.Sprintf("githubtest: AddComment: no issue #%d in %s/%s", number, r.owner, r.name))
	}
	return r.newComment(it, user, body).id
}

// AddFile stores content at path (slash-separated, no leading slash) on ref,
// DefaultBranch if ref is empty. Directories exist implicitly.
func (r *Repo) AddFile(ref, path string, content []byte) {
	r.srv.mu.Lock()
	defer r.srv.mu.Unlock()
	ref = cmp(ref, DefaultBranch)
	if r.files[ref] == nil {
		r.files[ref] = map[string][]byte{}
	}
	r.files[ref][path] = slices.Clone(content)
}

// Issue returns the title, body and labels of issue number as stored, and
// whether it exists, for tests that check what an approved action created.
func (r *Repo) Issue(number int) (title, body string, labels []string, ok bool) {
	r.srv.mu.Lock()
	defer r.srv.mu.Unlock()
	it := r.items[number]
	if it == nil {
		return "", "", nil, false
	}
	return it.title, it.body, slices.Clone(it.labels), true
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func now() time.Time { return time.Now().UTC().Truncate(time.Second) }

func (r *Repo) newItem(title, body, user string, labels []string) *item {
	r.nextNumber++
	t := now()
	it := &item{
		id: r.srv.newID(), number: r.nextNumber, title: title, body: body, state: "open",
		user: cmp(user, AuthenticatedUser), labels: slices.Clone(labels),
		created: t, updated: t,
	}
	r.items[it.number] = it
	return it
}

func (r *Repo) setState(it *item, state string) {
	if state != "closed" {
		return
	}
	t := it.updated
	it.state, it.closed = "closed", &t
	if !it.pull {
		reason := "completed"
		it.stateReason = &reason
	}
}

func (r *Repo) newComment(it *item, user, body string) *comment {
	t := now()
	c := &comment{id: r.srv.newID(), issue: it.number, body: body, user: cmp(user, AuthenticatedUser), created: t, updated: t}
	r.comments[it.number] = append(r.comments[it.number], c)
	it.commentCount++
	it.updated = t
	return c
}

// ---- handlers (called with srv.mu held) ----

const (
	docIssues   = "https://docs.github.com/rest/issues/issues"
	docComments = "https://docs.github.com/rest/issues/comments"
	docPulls    = "https://docs.github.com/rest/pulls/pulls"
	docContents = "https://docs.github.com/rest/repos/contents#get-repository-content"
)

func (r *Repo) listIssues(w http.ResponseWriter, q url.Values) {
	state := cmp(q.Get("state"), "open")
	if state != "open" && state != "closed" && state != "all" {
		validationFailed(w, docIssues+"#list-repository-issues", fieldError{Resource: "Issue", Code: "invalid", Field: "state"})
		return
	}
	var out []*item
	for _, it := range r.items {
		if state == "all" || it.state == state {
			out = append(out, it)
		}
	}
	// GitHub's default order: newest first.
	slices.SortFunc(out, func(a, b *item) int { return b.number - a.number })
	page, link := r.paginate(len(out), q, "issues")
	setLink(w, link)
	js := []issueJSON{}
	for _, it := range out[page.from:page.to] {
		js = append(js, r.issueJSON(it))
	}
	writeJSON(w, http.StatusOK, js)
}

func (r *Repo) getIssue(w http.ResponseWriter, num string) {
	it := r.lookup(num)
	if it == nil {
		notFound(w, docIssues+"#get-an-issue")
		return
	}
	writeJSON(w, http.StatusOK, r.issueJSON(it))
}

type createIssueRequest struct {
	Title  *string  `json:"title"`
	Body   string   `json:"body"`
	Labels []string `json:"labels"`
}

func (r *Repo) createIssue(w http.ResponseWriter, body []byte) {
	var req createIssueRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", docIssues+"#create-an-issue")
		return
	}
	if req.Title == nil || strings.TrimSpace(*req.Title) == "" {
		validationFailed(w, docIssues+"#create-an-issue", fieldError{Resource: "Issue", Code: "missing_field", Field: "title"})
		return
	}
	it := r.newItem(*req.Title, req.Body, AuthenticatedUser, req.Labels)
	w.Header().Set("Location", r.apiURL("issues/"+strconv.Itoa(it.number)))
	writeJSON(w, http.StatusCreated, r.issueJSON(it))
}

func (r *Repo) listComments(w http.ResponseWriter, num string, q url.Values) {
	it := r.lookup(num)
	if it == nil {
		notFound(w, docComments+"#list-issue-comments")
		return
	}
	cs := r.comments[it.number] // oldest first, as GitHub
	page, link := r.paginate(len(cs), q, "issues/"+strconv.Itoa(it.number)+"/comments")
	setLink(w, link)
	js := []commentJSON{}
	for _, c := range cs[page.from:page.to] {
		js = append(js, r.commentJSON(c))
	}
	writeJSON(w, http.StatusOK, js)
}

func (r *Repo) createComment(w http.ResponseWriter, num string, body []byte) {
	it := r.lookup(num)
	if it == nil {
		notFound(w, docComments+"#create-an-issue-comment")
		return
	}
	var req struct {
		Body *string `json:"body"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", docComments+"#create-an-issue-comment")
		return
	}
	if req.Body == nil || strings.TrimSpace(*req.Body) == "" {
		validationFailed(w, docComments+"#create-an-issue-comment", fieldError{Resource: "IssueComment", Code: "missing_field", Field: "body"})
		return
	}
	c := r.newComment(it, AuthenticatedUser, *req.Body)
	w.Header().Set("Location", r.apiURL("issues/comments/"+strconv.FormatInt(c.id, 10)))
	writeJSON(w, http.StatusCreated, r.commentJSON(c))
}

func (r *Repo) listPulls(w http.ResponseWriter, q url.Values) {
	state := cmp(q.Get("state"), "open")
	if state != "open" && state != "closed" && state != "all" {
		validationFailed(w, docPulls+"#list-pull-requests", fieldError{Resource: "PullRequest", Code: "invalid", Field: "state"})
		return
	}
	var out []*item
	for _, it := range r.items {
		if it.pull && (state == "all" || it.state == state) {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b *item) int { return b.number - a.number })
	page, link := r.paginate(len(out), q, "pulls")
	setLink(w, link)
	js := []pullJSON{}
	for _, it := range out[page.from:page.to] {
		js = append(js, r.pullJSON(it, false))
	}
	writeJSON(w, http.StatusOK, js)
}

func (r *Repo) getPull(w http.ResponseWriter, num string) {
	it := r.lookup(num)
	if it == nil || !it.pull {
		notFound(w, docPulls+"#get-a-pull-request")
		return
	}
	writeJSON(w, http.StatusOK, r.pullJSON(it, true))
}

func (r *Repo) getContents(w http.ResponseWriter, segs []string, ref string) {
	ref = cmp(ref, DefaultBranch)
	files := r.files[ref]
	if files == nil {
		writeError(w, http.StatusNotFound, "No commit found for the ref "+ref, docContents)
		return
	}
	parts := make([]string, 0, len(segs))
	for _, s := range segs {
		if s == "" {
			continue
		}
		parts = append(parts, unescape(s))
	}
	p := strings.Join(parts, "/")
	if content, ok := files[p]; ok {
		writeJSON(w, http.StatusOK, r.fileJSON(ref, p, content, true))
		return
	}
	// A directory: the immediate children of p.
	prefix := p + "/"
	if p == "" {
		prefix = ""
	}
	seen := map[string]bool{}
	entries := []contentJSON{}
	var names []string
	for fp := range files {
		if rest, ok := strings.CutPrefix(fp, prefix); ok {
			names = append(names, rest)
		}
	}
	slices.Sort(names)
	for _, rest := range names {
		child, _, isDir := strings.Cut(rest, "/")
		if seen[child] {
			continue
		}
		seen[child] = true
		if isDir {
			entries = append(entries, r.dirJSON(ref, prefix+child))
		} else {
			entries = append(entries, r.fileJSON(ref, prefix+child, files[prefix+child], false))
		}
	}
	if len(entries) == 0 {
		notFound(w, docContents)
		return
	}
	writeJSON(w, http.StatusOK, entries)
}

// lookup parses an issue number as GitHub does (digits only) and finds it.
func (r *Repo) lookup(num string) *item {
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || strconv.Itoa(n) != num {
		return nil
	}
	return r.items[n]
}

// ---- pagination ----

type pageRange struct{ from, to int }

// paginate picks the page q asks for out of n items and builds GitHub's Link
// header, whose URLs use the /repositories/{id}/ form as GitHub's do.
func (r *Repo) paginate(n int, q url.Values, resource string) (pageRange, string) {
	perPage, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || perPage <= 0 {
		perPage = 30
	}
	perPage = min(perPage, 100)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	last := max((n+perPage-1)/perPage, 1)
	from := min((page-1)*perPage, n)
	to := min(from+perPage, n)

	pageURL := func(p int) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(p))
		return fmt.Sprintf("<%s/repositories/%d/%s?%s>", r.srv.URL, r.id, resource, v.Encode())
	}
	var links []string
	if page > 1 {
		links = append(links, pageURL(min(page-1, last))+`; rel="prev"`)
	}
	if page < last {
		links = append(links, pageURL(page+1)+`; rel="next"`, pageURL(last)+`; rel="last"`)
	}
	if page > 1 {
		links = append(links, pageURL(1)+`; rel="first"`)
	}
	return pageRange{from, to}, strings.Join(links, ", ")
}

func setLink(w http.ResponseWriter, link string) {
	if link != "" {
		w.Header().Set("Link", link)
	}
}

// ---- JSON, with GitHub's field names ----

type userJSON struct {
	Login     string `json:"login"`
	ID        int64  `json:"id"`
	NodeID    string `json:"node_id"`
	AvatarURL string `json:"avatar_url"`
	URL       string `json:"url"`
	HTMLURL   string `json:"html_url"`
	Type      string `json:"type"`
	SiteAdmin bool   `json:"site_admin"`
}

type labelJSON struct {
	ID          int64   `json:"id"`
	NodeID      string  `json:"node_id"`
	URL         string  `json:"url"`
	Name        string  `json:"name"`
	Color       string  `json:"color"`
	Default     bool    `json:"default"`
	Description *string `json:"description"`
}

type issuePullRefJSON struct {
	URL      string     `json:"url"`
	HTMLURL  string     `json:"html_url"`
	DiffURL  string     `json:"diff_url"`
	PatchURL string     `json:"patch_url"`
	MergedAt *time.Time `json:"merged_at"`
}

type issueJSON struct {
	URL               string            `json:"url"`
	RepositoryURL     string            `json:"repository_url"`
	CommentsURL       string            `json:"comments_url"`
	HTMLURL           string            `json:"html_url"`
	ID                int64             `json:"id"`
	NodeID            string            `json:"node_id"`
	Number            int               `json:"number"`
	Title             string            `json:"title"`
	User              userJSON          `json:"user"`
	Labels            []labelJSON       `json:"labels"`
	State             string            `json:"state"`
	StateReason       *string           `json:"state_reason"`
	Locked            bool              `json:"locked"`
	Assignee          *userJSON         `json:"assignee"`
	Assignees         []userJSON        `json:"assignees"`
	Comments          int               `json:"comments"`
	CreatedAt         time.Time         `json:"created_at"`
	UpdatedAt         time.Time         `json:"updated_at"`
	ClosedAt          *time.Time        `json:"closed_at"`
	AuthorAssociation string            `json:"author_association"`
	Body              *string           `json:"body"`
	Draft             *bool             `json:"draft,omitempty"`
	PullRequest       *issuePullRefJSON `json:"pull_request,omitempty"`
}

type branchJSON struct {
	Label string   `json:"label"`
	Ref   string   `json:"ref"`
	SHA   string   `json:"sha"`
	User  userJSON `json:"user"`
}

type pullJSON struct {
	URL               string      `json:"url"`
	ID                int64       `json:"id"`
	NodeID            string      `json:"node_id"`
	HTMLURL           string      `json:"html_url"`
	DiffURL           string      `json:"diff_url"`
	PatchURL          string      `json:"patch_url"`
	IssueURL          string      `json:"issue_url"`
	Number            int         `json:"number"`
	State             string      `json:"state"`
	Locked            bool        `json:"locked"`
	Title             string      `json:"title"`
	User              userJSON    `json:"user"`
	Body              *string     `json:"body"`
	Labels            []labelJSON `json:"labels"`
	CreatedAt         time.Time   `json:"created_at"`
	UpdatedAt         time.Time   `json:"updated_at"`
	ClosedAt          *time.Time  `json:"closed_at"`
	MergedAt          *time.Time  `json:"merged_at"`
	Head              branchJSON  `json:"head"`
	Base              branchJSON  `json:"base"`
	AuthorAssociation string      `json:"author_association"`
	Draft             bool        `json:"draft"`
	// Only in the answer for one pull request, as on GitHub.
	Merged    *bool `json:"merged,omitempty"`
	Mergeable *bool `json:"mergeable,omitempty"`
	Comments  *int  `json:"comments,omitempty"`
}

type commentJSON struct {
	ID                int64     `json:"id"`
	NodeID            string    `json:"node_id"`
	URL               string    `json:"url"`
	HTMLURL           string    `json:"html_url"`
	Body              string    `json:"body"`
	User              userJSON  `json:"user"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
	IssueURL          string    `json:"issue_url"`
	AuthorAssociation string    `json:"author_association"`
}

type contentLinksJSON struct {
	Self string `json:"self"`
	Git  string `json:"git"`
	HTML string `json:"html"`
}

type contentJSON struct {
	Type        string           `json:"type"`
	Encoding    string           `json:"encoding,omitempty"`
	Size        int              `json:"size"`
	Name        string           `json:"name"`
	Path        string           `json:"path"`
	Content     *string          `json:"content,omitempty"`
	SHA         string           `json:"sha"`
	URL         string           `json:"url"`
	GitURL      string           `json:"git_url"`
	HTMLURL     string           `json:"html_url"`
	DownloadURL *string          `json:"download_url"`
	Links       contentLinksJSON `json:"_links"`
}

func (r *Repo) apiURL(rest string) string {
	return fmt.Sprintf("%s/repos/%s/%s/%s", r.srv.URL, r.owner, r.name, rest)
}

// htmlURL is where github.com would show the resource; the fake does not serve it.
func (r *Repo) htmlURL(rest string) string {
	return fmt.Sprintf("https://github.com/%s/%s/%s", r.owner, r.name, rest)
}

func (r *Repo) user(login string) userJSON {
	var id int64
	for _, c := range login {
		id = id*31 + int64(c)
	}
	id = id&0xffffff + 1
	return userJSON{
		Login: login, ID: id, NodeID: fmt.Sprintf("U_%d", id),
		AvatarURL: fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", id),
		URL:       fmt.Sprintf("%s/users/%s", r.srv.URL, login),
		HTMLURL:   "https://github.com/" + login, Type: "User",
	}
}

func (r *Repo) labels(names []string) []labelJSON {
	out := []labelJSON{}
	for i, n := range names {
		out = append(out, labelJSON{
			ID: int64(208045946 + i), NodeID: "LA_" + n, URL: r.apiURL("labels/" + url.PathEscape(n)),
			Name: n, Color: "ededed",
		})
	}
	return out
}

// association is the author_association GitHub reports: the token's owner
// is taken to own the repository.
func (r *Repo) association(login string) string {
	if login == r.owner || login == AuthenticatedUser {
		return "OWNER"
	}
	return "NONE"
}

func (r *Repo) issueJSON(it *item) issueJSON {
	num := strconv.Itoa(it.number)
	body := it.body
	j := issueJSON{
		URL: r.apiURL("issues/" + num), RepositoryURL: strings.TrimSuffix(r.apiURL(""), "/"),
		CommentsURL: r.apiURL("issues/" + num + "/comments"), HTMLURL: r.htmlURL("issues/" + num),
		ID: it.id, NodeID: fmt.Sprintf("I_%d", it.id), Number: it.number, Title: it.title,
		User: r.user(it.user), Labels: r.labels(it.labels), State: it.state, StateReason: it.stateReason,
		Assignees: []userJSON{}, Comments: it.commentCount,
		CreatedAt: it.created, UpdatedAt: it.updated, ClosedAt: it.closed,
		AuthorAssociation: r.association(it.user), Body: &body,
	}
	if it.pull {
		draft := it.draft
		j.Draft = &draft
		j.HTMLURL = r.htmlURL("pull/" + num)
		j.PullRequest = &issuePullRefJSON{
			URL: r.apiURL("pulls/" + num), HTMLURL: r.htmlURL("pull/" + num),
			DiffURL: r.htmlURL("pull/" + num + ".diff"), PatchURL: r.htmlURL("pull/" + num + ".patch"),
			MergedAt: it.merged,
		}
	}
	return j
}

func (r *Repo) branch(ref string) branchJSON {
	sum := sha1.Sum([]byte(r.owner + "/" + r.name + ":" + ref))
	return branchJSON{Label: r.owner + ":" + ref, Ref: ref, SHA: fmt.Sprintf("%x", sum), User: r.user(r.owner)}
}

func (r *Repo) pullJSON(it *item, detail bool) pullJSON {
	num := strconv.Itoa(it.number)
	body := it.body
	j := pullJSON{
		URL: r.apiURL("pulls/" + num), ID: it.id, NodeID: fmt.Sprintf("PR_%d", it.id),
		HTMLURL: r.htmlURL("pull/" + num), DiffURL: r.htmlURL("pull/" + num + ".diff"),
		PatchURL: r.htmlURL("pull/" + num + ".patch"), IssueURL: r.apiURL("issues/" + num),
		Number: it.number, State: it.state, Title: it.title, User: r.user(it.user), Body: &body,
		Labels: r.labels(it.labels), CreatedAt: it.created, UpdatedAt: it.updated,
		ClosedAt: it.closed, MergedAt: it.merged, Head: r.branch(it.head), Base: r.branch(it.base),
		AuthorAssociation: r.association(it.user), Draft: it.draft,
	}
	if detail {
		merged := it.merged != nil
		comments := it.commentCount
		j.Merged, j.Comments = &merged, &comments
	}
	return j
}

func (r *Repo) commentJSON(c *comment) commentJSON {
	num := strconv.Itoa(c.issue)
	id := strconv.FormatInt(c.id, 10)
	return commentJSON{
		ID: c.id, NodeID: "IC_" + id, URL: r.apiURL("issues/comments/" + id),
		HTMLURL: r.htmlURL("issues/" + num + "#issuecomment-" + id), Body: c.body,
		User: r.user(c.user), CreatedAt: c.created, UpdatedAt: c.updated,
		IssueURL: r.apiURL("issues/" + num), AuthorAssociation: r.association(c.user),
	}
}

// gitBlobSHA is the blob id git gives content.
func gitBlobSHA(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return fmt.Sprintf("%x", h.Sum(nil))
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// fileJSON renders a file. withContent is true for a request for the file
// itself; directory listings carry no content, as on GitHub.
func (r *Repo) fileJSON(ref, p string, content []byte, withContent bool) contentJSON {
	sha := gitBlobSHA(content)
	self := r.apiURL("contents/"+escapePath(p)) + "?ref=" + url.QueryEscape(ref)
	download := fmt.Sprintf("https://raw.githubusercontent.com/%s/%s/%s/%s", r.owner, r.name, ref, escapePath(p))
	j := contentJSON{
		Type: "file", Size: len(content), Name: path.Base(p), Path: p, SHA: sha, URL: self,
		GitURL: r.apiURL("git/blobs/" + sha), HTMLURL: r.htmlURL("blob/" + ref + "/" + escapePath(p)),
		DownloadURL: &download,
	}
	j.Links = contentLinksJSON{Self: j.URL, Git: j.GitURL, HTML: j.HTMLURL}
	if withContent {
		encoded := ""
		j.Encoding = "none"
		if len(content) <= largeFile {
			encoded, j.Encoding = wrapBase64(content), "base64"
		}
		j.Content = &encoded
	}
	return j
}

func (r *Repo) dirJSON(ref, p string) contentJSON {
	sum := sha1.Sum([]byte(ref + ":" + p))
	sha := fmt.Sprintf("%x", sum)
	j := contentJSON{
		Type: "dir", Name: path.Base(p), Path: p, SHA: sha,
		URL:    r.apiURL("contents/"+escapePath(p)) + "?ref=" + url.QueryEscape(ref),
		GitURL: r.apiURL("git/trees/" + sha), HTMLURL: r.htmlURL("tree/" + ref + "/" + escapePath(p)),
	}
	j.Links = contentLinksJSON{Self: j.URL, Git: j.GitURL, HTML: j.HTMLURL}
	return j
}

// wrapBase64 encodes as GitHub does: standard base64 with a newline after
// every 60 characters.
func wrapBase64(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	var sb strings.Builder
	for len(s) > 60 {
		sb.WriteString(s[:60])
		sb.WriteByte('\n')
		s = s[60:]
	}
	sb.WriteString(s)
	sb.WriteByte('\n')
	return sb.String()
}

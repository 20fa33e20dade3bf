package githubapi

// Design: a Client is immutable after New and safe for concurrent use; it
// holds no locks and starts no goroutines. All HTTP goes through one fetch
// client whose only prefix is the repository's API path, so even a bug in
// this package cannot send the token anywhere else: a URL outside
// "<base>/repos/OWNER/REPO/" is refused by fetch before it is dialled.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/gadgetd/gadgetd/gatekeepers/internal/fetch"
)

// APIVersion is the GitHub REST API version every request asks for.
const APIVersion = "2022-11-28"

const userAgent = "gadgetd-githubapi"

// Client is a GitHub REST API client for one repository. Create it with New.
type Client struct {
	owner, repo string
	baseURL     string // without a trailing slash
	prefix      string // baseURL + "/repos/OWNER/REPO/"
	token       string
	http        *fetch.Client
}

// An Option configures New.
type Option func(*options)

type options struct {
	allowPrivateBase bool
	fetchOptions     []fetch.Option
}

// WithAllowPrivateBase allows the base URL to be on a loopback, private or
// link-local address, such as a test server (githubtest) or a GitHub
// Enterprise Server inside the operator's network. Without it, such an
// address is refused when dialled.
func WithAllowPrivateBase() Option {
	return func(o *options) { o.allowPrivateBase = true }
}

// WithFetchOptions passes options (timeout, size bounds, resolver) to the
// fetch client that carries every request.
func WithFetchOptions(opts ...fetch.Option) Option {
	return func(o *options) { o.fetchOptions = append(o.fetchOptions, opts...) }
}

var (
	// GitHub logins and organization names: letters, digits and hyphens;
	// underscores occur in Enterprise Managed Users' logins.
	ownerPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$`)
	repoPattern  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// New returns a client for the repository owner/repo of the GitHub API at
// baseURL ("https://api.github.com", or "https://HOST/api/v3" for GitHub
// Enterprise Server), authenticating with token. An empty token sends no
// Authorization header (anonymous access to a public repository).
//
// The token is the server's secret: it is sent only in the Authorization
// header of requests under the repository's API path, and never appears in
// an error or in String.
func New(baseURL, owner, repo, token string, opts ...Option) (*Client, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if !ownerPattern.MatchString(owner) {
		return nil, fmt.Errorf("githubapi: invalid repository owner %s: %w", quote(owner), ErrInvalidInput)
	}
	if !repoPattern.MatchString(repo) || repo == "." || repo == ".." {
		return nil, fmt.Errorf("githubapi: invalid repository name %s: %w", quote(repo), ErrInvalidInput)
	}
	for _, c := range token {
		if c <= ' ' || c >= 0x7f {
			// Say nothing about the token but that it is malformed.
			return nil, fmt.Errorf("githubapi: the token contains a character that cannot appear in an HTTP header: %w", ErrInvalidInput)
		}
	}
	u, err := url.Parse(baseURL)
	switch {
	case err != nil:
		return nil, fmt.Errorf("githubapi: invalid base URL: %w", ErrInvalidInput)
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		return nil, fmt.Errorf("githubapi: base URL %s must be an absolute http or https URL: %w", quote(baseURL), ErrInvalidInput)
	case u.User != nil:
		return nil, fmt.Errorf("githubapi: base URL must not contain credentials: %w", ErrInvalidInput)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("githubapi: base URL %s must not have a query or fragment: %w", quote(baseURL), ErrInvalidInput)
	}
	base := strings.TrimSuffix(u.String(), "/")
	prefix := base + "/repos/" + owner + "/" + repo + "/"
	d, err := fetch.New([]fetch.Prefix{{URL: prefix, AllowPrivate: o.allowPrivateBase}}, o.fetchOptions...)
	if err != nil {
		return nil, fmt.Errorf("githubapi: %w", err)
	}
	return &Client{owner: owner, repo: repo, baseURL: base, prefix: prefix, token: token, http: d}, nil
}

// String describes the client without its token.
func (c *Client) String() string {
	return fmt.Sprintf("githubapi.Client(%s/%s at %s)", c.owner, c.repo, c.baseURL)
}

// GoString is String, so that %#v does not print the token either.
func (c *Client) GoString() string { return c.String() }

// Repository returns "owner/repo".
func (c *Client) Repository() string { return c.owner + "/" + c.repo }

// call sends one request to path (relative to the repository's API path,
// already escaped) and decodes a 2xx answer's JSON into out. op names the
// operation in errors.
func (c *Client) call(ctx context.Context, op, method, path string, query url.Values, in, out any) (*fetch.Response, error) {
	req := &fetch.Request{
		Method: method,
		URL:    c.prefix + path,
		Header: http.Header{
			"Accept":               {"application/vnd.github+json"},
			"X-Github-Api-Version": {APIVersion},
			"User-Agent":           {userAgent},
		},
	}
	if len(query) > 0 {
		req.URL += "?" + query.Encode()
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if in != nil {
		body, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("githubapi: %s: %w", op, err)
		}
		req.Body = body
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("githubapi: %s: %w", op, err)
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, c.apiError(op, resp)
	}
	if out != nil {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			return nil, fmt.Errorf("githubapi: %s: GitHub's answer (%d) is not the expected JSON: %v", op, resp.Status, err)
		}
	}
	return resp, nil
}

// ListOptions selects one page of a list. Zero values mean GitHub's defaults:
// page 1, 30 per page.
type ListOptions struct {
	Page    int
	PerPage int // at most 100
}

func (o ListOptions) query(q url.Values) (url.Values, error) {
	if o.Page < 0 || o.PerPage < 0 || o.PerPage > 100 {
		return nil, fmt.Errorf("githubapi: page %d with %d per page is out of range (per page is at most 100): %w", o.Page, o.PerPage, ErrInvalidInput)
	}
	if q == nil {
		q = url.Values{}
	}
	if o.Page > 0 {
		q.Set("page", strconv.Itoa(o.Page))
	}
	if o.PerPage > 0 {
		q.Set("per_page", strconv.Itoa(o.PerPage))
	}
	return q, nil
}

// Page is where a list continues, from GitHub's Link header: the numbers of
// the next and the last page, 0 when there is none. Pass Next as
// ListOptions.Page to read on.
//
// GitHub's Link URLs name the repository by id (/repositories/ID/...), which
// is outside the prefix this client may reach; so the client never follows
// them, it only reads their page numbers.
type Page struct {
	Next, Last int
}

func parseLink(h string) Page {
	var p Page
	for _, part := range strings.Split(h, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		target = strings.TrimSpace(target)
		if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
			continue
		}
		u, err := url.Parse(target[1 : len(target)-1])
		if err != nil {
			continue
		}
		n, err := strconv.Atoi(u.Query().Get("page"))
		if err != nil || n <= 0 {
			continue
		}
		for _, param := range strings.Split(params, ";") {
			switch strings.ReplaceAll(strings.TrimSpace(param), " ", "") {
			case `rel="next"`:
				p.Next = n
			case `rel="last"`:
				p.Last = n
			}
		}
	}
	return p
}

// State selects issues or pull requests by state.
type State string

const (
	StateOpen   State = "open" // the default
	StateClosed State = "closed"
	StateAll    State = "all"
)

func (s State) query(o ListOptions) (url.Values, error) {
	switch s {
	case "":
		return o.query(nil)
	case StateOpen, StateClosed, StateAll:
		return o.query(url.Values{"state": {string(s)}})
	}
	return nil, fmt.Errorf("githubapi: state %s is not open, closed or all: %w", quote(string(s)), ErrInvalidInput)
}

func checkNumber(n int) error {
	if n <= 0 {
		return fmt.Errorf("githubapi: issue number %d is not positive: %w", n, ErrInvalidInput)
	}
	return nil
}

// escapeFilePath escapes a repository file path segment by segment, refusing
// what could leave the contents/ path or be read differently by a server.
func escapeFilePath(p string) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("githubapi: file path %s %s: %w", quote(p), why, ErrInvalidInput)
	}
	if p == "" || len(p) > 4096 {
		return "", bad("must have 1 to 4096 bytes")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		switch {
		case s == "":
			return "", bad("has an empty segment (a leading, trailing or doubled slash)")
		case s == "." || s == "..":
			return "", bad(`has a "." or ".." segment`)
		case strings.ContainsAny(s, "\\"):
			return "", bad("contains a backslash")
		case strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }):
			return "", bad("contains a control character")
		}
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/"), nil
}

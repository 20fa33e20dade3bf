package githubtest

// Design: one mutex (Server.mu) guards all state: the repositories and
// everything in them, the rate-limit switch and the request log. Handlers run
// on net/http's goroutines and hold mu for the whole of one request, so every
// request sees and leaves a consistent store; the fake is for tests and never
// needs concurrency between requests. Seed methods take the same lock, so a
// test may seed while requests are in flight.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AuthenticatedUser is the login of the token's owner: the author of every
// issue and comment created through the API.
const AuthenticatedUser = "gadgetd-bot"

// A RateLimit says how the server answers while rate limiting is on.
type RateLimit int

const (
	// NoRateLimit serves every request (the default).
	NoRateLimit RateLimit = iota
	// PrimaryRateLimit answers 403 "API rate limit exceeded" with
	// X-RateLimit-Remaining: 0 and X-RateLimit-Reset, as GitHub does when
	// the hourly quota is spent.
	PrimaryRateLimit
	// SecondaryRateLimit answers 429 with Retry-After, as GitHub does for
	// abuse-detection ("secondary") limits.
	SecondaryRateLimit
)

// Request is one request as the server received it.
type Request struct {
	Method string
	// Path is the escaped path, as sent.
	Path     string
	RawQuery string
	// Header is a copy of the request's headers, Authorization included.
	Header http.Header
	Body   []byte
	// Authorized reports whether the request carried the server's token.
	Authorized bool
	// Status is the status code of the answer.
	Status int
}

// Server is a running fake GitHub API. Its zero value is not usable; call
// NewServer, and Close when done.
type Server struct {
	// URL is the API base URL, e.g. "http://127.0.0.1:40123", to use where
	// "https://api.github.com" would be.
	URL string

	token string
	http  *httptest.Server

	mu         sync.Mutex
	repos      []*Repo // in creation order; index+1 is not the id
	nextRepo   int64
	nextID     int64 // ids of issues, pulls and comments, unique server-wide
	rateLimit  RateLimit
	writeDelay time.Duration
	log        []Request
}

// NewServer starts a fake GitHub API on loopback that accepts token.
func NewServer(token string) *Server {
	s := &Server{token: token, nextRepo: 1296269, nextID: 1000}
	s.http = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.http.URL
	return s
}

// Close shuts the server down, waiting for requests in flight.
func (s *Server) Close() { s.http.Close() }

// SetWriteDelay makes the server wait d after making each write (any
// method but GET and HEAD) before it answers: a slow GitHub, for tests of a
// client that stops between GitHub's change and its answer.
func (s *Server) SetWriteDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeDelay = d
}

// SetRateLimit switches rate limiting on (PrimaryRateLimit,
// SecondaryRateLimit) or off (NoRateLimit). Rate-limited requests are logged.
func (s *Server) SetRateLimit(r RateLimit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimit = r
}

// Requests returns a copy of the log of every request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// Writes reports how many requests with a method other than GET or HEAD the
// server has received, whatever their outcome: the number of attempted side
// effects.
func (s *Server) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.log {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			n++
		}
	}
	return n
}

// maxRequestBody bounds what the fake reads of a request body.
const maxRequestBody = 1 << 20

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	rec := &statusRecorder{ResponseWriter: w}

	s.mu.Lock()
	if d := s.writeDelay; d > 0 && r.Method != http.MethodGet && r.Method != http.MethodHead {
		// Deferred first, so it runs last: the change is made and the lock
		// released, and the answer (buffered until the handler returns)
		// waits.
		defer time.Sleep(d)
	}
	defer s.mu.Unlock()
	authorized := s.authorized(r.Header.Get("Authorization"))
	defer func() {
		s.log = append(s.log, Request{
			Method:     r.Method,
			Path:       r.URL.EscapedPath(),
			RawQuery:   r.URL.RawQuery,
			Header:     r.Header.Clone(),
			Body:       body,
			Authorized: authorized,
			Status:     rec.status,
		})
	}()

	s.setRateHeaders(rec)
	// The order of GitHub's checks: User-Agent, credentials, rate limit, route.
	switch {
	case r.Header.Get("User-Agent") == "":
		writeError(rec, http.StatusForbidden, "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.", "")
	case r.Header.Get("Authorization") == "":
		writeError(rec, http.StatusUnauthorized, "Requires authentication", "https://docs.github.com/rest")
	case !authorized:
		writeError(rec, http.StatusUnauthorized, "Bad credentials", "https://docs.github.com/rest")
	case s.rateLimit == PrimaryRateLimit:
		rec.Header().Set("X-RateLimit-Remaining", "0")
		writeError(rec, http.StatusForbidden, "API rate limit exceeded for user ID 1.", "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api")
	case s.rateLimit == SecondaryRateLimit:
		rec.Header().Set("Retry-After", "60")
		writeError(rec, http.StatusTooManyRequests, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits")
	default:
		s.route(rec, r, body)
	}
}

func (s *Server) authorized(h string) bool {
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || cred != s.token || s.token == "" {
		return false
	}
	return strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "token")
}

func (s *Server) setRateHeaders(w http.ResponseWriter) {
	used := len(s.log) + 1
	h := w.Header()
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(5000-used, 0)))
	h.Set("X-RateLimit-Used", strconv.Itoa(used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")
}

// route dispatches on the escaped path, segment by segment, so that an
// escaped "/" inside a segment never splits it.
func (s *Server) route(w http.ResponseWriter, r *http.Request, body []byte) {
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	var repo *Repo
	var rest []string
	switch {
	case len(segs) >= 3 && segs[0] == "repos":
		repo = s.findRepo(unescape(segs[1]), unescape(segs[2]))
		rest = segs[3:]
	case len(segs) >= 2 && segs[0] == "repositories":
		id, _ := strconv.ParseInt(segs[1], 10, 64)
		repo = s.findRepoByID(id)
		rest = segs[2:]
	}
	if repo == nil || len(rest) == 0 {
		notFound(w, "")
		return
	}
	q := r.URL.Query()
	get, post := r.Method == http.MethodGet, r.Method == http.MethodPost
	switch {
	case rest[0] == "issues" && len(rest) == 1 && get:
		repo.listIssues(w, q)
	case rest[0] == "issues" && len(rest) == 1 && post:
		repo.createIssue(w, body)
	case rest[0] == "issues" && len(rest) == 2 && get:
		repo.getIssue(w, rest[1])
	case rest[0] == "issues" && len(rest) == 3 && rest[2] == "comments" && get:
		repo.listComments(w, rest[1], q)
	case rest[0] == "issues" && len(rest) == 3 && rest[2] == "comments" && post:
		repo.createComment(w, rest[1], body)
	case rest[0] == "pulls" && len(rest) == 1 && get:
		repo.listPulls(w, q)
	case rest[0] == "pulls" && len(rest) == 2 && get:
		repo.getPull(w, rest[1])
	case rest[0] == "contents" && get:
		repo.getContents(w, rest[1:], q.Get("ref"))
	default:
		notFound(w, "")
	}
}

func (s *Server) findRepo(owner, name string) *Repo {
	for _, r := range s.repos {
		// GitHub's owner and repository names are case-insensitive.
		if strings.EqualFold(r.owner, owner) && strings.EqualFold(r.name, name) {
			return r
		}
	}
	return nil
}

func (s *Server) findRepoByID(id int64) *Repo {
	for _, r := range s.repos {
		if r.id == id {
			return r
		}
	}
	return nil
}

func unescape(seg string) string {
	u, err := url.PathUnescape(seg)
	if err != nil {
		return "\x00invalid" // matches nothing
	}
	return u
}

func (s *Server) newID() int64 {
	s.nextID++
	return s.nextID
}

// statusRecorder remembers the status code written, for the log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// errorBody is GitHub's error document.
type errorBody struct {
	Message          string       `json:"message"`
	Errors           []fieldError `json:"errors,omitempty"`
	DocumentationURL string       `json:"documentation_url,omitempty"`
	Status           string       `json:"status"`
}

type fieldError struct {
	Resource string `json:"resource"`
	Code     string `json:"code"`
	Field    string `json:"field"`
}

func writeError(w http.ResponseWriter, status int, message, docURL string, errs ...fieldError) {
	writeJSON(w, status, errorBody{Message: message, Errors: errs, DocumentationURL: docURL, Status: strconv.Itoa(status)})
}

func notFound(w http.ResponseWriter, docURL string) {
	if docURL == "" {
		docURL = "https://docs.github.com/rest"
	}
	writeError(w, http.StatusNotFound, "Not Found", docURL)
}

func validationFailed(w http.ResponseWriter, docURL string, errs ...fieldError) {
	writeError(w, http.StatusUnprocessableEntity, "Validation Failed", docURL, errs...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("githubtest: encoding a response: %v", err)) // a bug in the fake
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

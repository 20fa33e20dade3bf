package githubapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gadgetd/gadgetd/gatekeepers/internal/fetch"
)

// Sentinels for errors.Is. An *APIError matches the one its status means.
var (
	// ErrInvalidInput: the call was refused before anything was sent (a bad
	// owner, repository name, issue number, file path, state or page).
	ErrInvalidInput = errors.New("invalid input")
	// ErrUnauthorized: GitHub answered 401 (bad or missing credentials).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden: GitHub answered 403 for a reason other than a rate limit.
	ErrForbidden = errors.New("forbidden")
	// ErrNotFound: GitHub answered 404. GitHub also answers 404 for a private
	// repository the token cannot see.
	ErrNotFound = errors.New("not found")
	// ErrValidation: GitHub answered 422 (for example, an empty issue title).
	ErrValidation = errors.New("validation failed")
	// ErrRateLimited: GitHub answered 429, or 403 with no requests remaining
	// or a Retry-After.
	ErrRateLimited = errors.New("rate limited")
	// ErrNotAFile: GetFile's path is a directory, a symlink or a submodule.
	ErrNotAFile = errors.New("not a file")
	// ErrFileTooLarge: GetFile's file is larger than the contents API
	// returns inline (1 MB).
	ErrFileTooLarge = errors.New("file too large")
)

// Bounds on what of GitHub's error text goes into an error.
const (
	maxMessage     = 200
	maxFieldErrors = 5
	maxFieldText   = 80
)

// APIError is a non-2xx answer from GitHub.
type APIError struct {
	Op         string // what was being done, e.g. "get issue #7"
	StatusCode int
	// Message is GitHub's message, with control characters replaced, the
	// token redacted and the length bounded.
	Message          string
	DocumentationURL string
	// Errors are the first few of GitHub's validation details (422).
	Errors []FieldError
	// For rate limits: when to try again, if GitHub said. RetryAfter comes
	// from Retry-After, Reset from X-RateLimit-Reset.
	RetryAfter time.Duration
	Reset      time.Time
}

// FieldError is one of the details of a 422 answer.
type FieldError struct {
	Resource string `json:"resource"`
	Field    string `json:"field"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

// RateLimited reports whether the answer is a rate limit rather than a
// refusal: GitHub uses 403 for both.
func (e *APIError) RateLimited() bool {
	return e.StatusCode == http.StatusTooManyRequests ||
		e.StatusCode == http.StatusForbidden && (e.RetryAfter > 0 || !e.Reset.IsZero())
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "githubapi: %s: GitHub answered %d", e.Op, e.StatusCode)
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	for i, fe := range e.Errors {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString("; ")
		}
		switch {
		case fe.Message != "":
			b.WriteString(fe.Message)
		default:
			fmt.Fprintf(&b, "%s.%s: %s", fe.Resource, fe.Field, fe.Code)
		}
		if i == len(e.Errors)-1 {
			b.WriteString(")")
		}
	}
	switch {
	case !e.RateLimited():
	case e.RetryAfter > 0:
		fmt.Fprintf(&b, "; rate limited, retry after %s", e.RetryAfter)
	case !e.Reset.IsZero():
		fmt.Fprintf(&b, "; rate limited until %s", e.Reset.UTC().Format(time.RFC3339))
	default:
		b.WriteString("; rate limited")
	}
	return b.String()
}

// Is matches the sentinel for the answer's status.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrRateLimited:
		return e.RateLimited()
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden && !e.RateLimited()
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrValidation:
		return e.StatusCode == http.StatusUnprocessableEntity
	}
	return false
}

// apiError builds the error for a non-2xx answer. Whatever GitHub (or
// whatever answers in its place) wrote is cleaned, bounded and has the token
// redacted, since errors end up in logs and in front of gadgets.
func (c *Client) apiError(op string, resp *fetch.Response) *APIError {
	e := &APIError{Op: op, StatusCode: resp.Status}
	var body struct {
		Message          string          `json:"message"`
		DocumentationURL string          `json:"documentation_url"`
		Errors           json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(resp.Body, &body) == nil {
		e.Message = c.clean(body.Message, maxMessage)
		e.DocumentationURL = c.clean(body.DocumentationURL, maxMessage)
		// "errors" is usually a list of objects, sometimes of strings.
		var objs []FieldError
		var strs []string
		if json.Unmarshal(body.Errors, &objs) == nil {
			for _, fe := range objs[:min(len(objs), maxFieldErrors)] {
				e.Errors = append(e.Errors, FieldError{
					Resource: c.clean(fe.Resource, maxFieldText), Field: c.clean(fe.Field, maxFieldText),
					Code: c.clean(fe.Code, maxFieldText), Message: c.clean(fe.Message, maxFieldText),
				})
			}
		} else if json.Unmarshal(body.Errors, &strs) == nil {
			for _, s := range strs[:min(len(strs), maxFieldErrors)] {
				e.Errors = append(e.Errors, FieldError{Message: c.clean(s, maxFieldText)})
			}
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.Status)
	}
	if resp.Status == http.StatusForbidden || resp.Status == http.StatusTooManyRequests {
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			e.RetryAfter = time.Duration(min(secs, 24*3600)) * time.Second
		}
		if resp.Header.Get("X-RateLimit-Remaining") == "0" {
			if unix, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil && unix > 0 {
				e.Reset = time.Unix(unix, 0)
			} else if e.RetryAfter == 0 {
				e.RetryAfter = time.Minute // spent, and GitHub did not say until when
			}
		}
	}
	return e
}

// clean makes s safe to show: the token redacted, control and other
// non-printing characters replaced, at most n bytes.
func (c *Client) clean(s string, n int) string {
	if c.token != "" {
		s = strings.ReplaceAll(s, c.token, "[REDACTED]")
	}
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// quote shows untrusted input in an error: quoted and bounded.
func quote(s string) string {
	if len(s) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

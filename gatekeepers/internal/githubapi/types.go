package githubapi

import (
	"encoding/json"
	"time"
)

// The types hold what a UI shows, under GitHub's JSON field names. Times are
// zero when GitHub sends null (an open issue's ClosedAt).

// User is an account, as the author of an issue, pull request or comment.
type User struct {
	Login   string `json:"login"`
	HTMLURL string `json:"html_url"`
}

// Label is an issue's or pull request's label.
type Label struct {
	Name        string `json:"name"`
	Color       string `json:"color"` // hex RGB without "#"
	Description string `json:"description"`
}

// Issue is an issue. GetIssue also answers for a pull request's number, as
// GitHub does, with IsPullRequest set.
type Issue struct {
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	State     string    `json:"state"` // "open" or "closed"
	User      User      `json:"user"`
	HTMLURL   string    `json:"html_url"`
	Labels    []Label   `json:"labels"`
	Comments  int       `json:"comments"` // how many
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	ClosedAt  time.Time `json:"closed_at"`
	// IsPullRequest is set when GitHub's answer has a "pull_request" key.
	IsPullRequest bool `json:"-"`
}

// issueJSON is an Issue on the wire, where only the presence of the
// "pull_request" key tells a pull request from an issue.
type issueJSON struct {
	Issue
	PullRequest json.RawMessage `json:"pull_request"`
}

func (w *issueJSON) issue() Issue {
	is := w.Issue
	is.IsPullRequest = len(w.PullRequest) > 0 && string(w.PullRequest) != "null"
	return is
}

// Branch is one end of a pull request.
type Branch struct {
	Label string `json:"label"` // "owner:ref"
	Ref   string `json:"ref"`
	SHA   string `json:"sha"`
}

// Pull is a pull request.
type Pull struct {
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	State     string    `json:"state"` // "open" or "closed"; a merged pull request is closed
	User      User      `json:"user"`
	HTMLURL   string    `json:"html_url"`
	Labels    []Label   `json:"labels"`
	Head      Branch    `json:"head"`
	Base      Branch    `json:"base"`
	Draft     bool      `json:"draft"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	ClosedAt  time.Time `json:"closed_at"`
	MergedAt  time.Time `json:"merged_at"`
	// Merged is derived from MergedAt, which GitHub sends in lists as well
	// as for one pull request (its "merged" field is only in the latter).
	Merged bool `json:"-"`
	// Comments is the number of issue comments. GitHub sends it only for
	// one pull request (GetPull); it is 0 in ListPulls.
	Comments int `json:"comments"`
}

func (p Pull) withDerived() Pull {
	p.Merged = !p.MergedAt.IsZero()
	return p
}

// Comment is a comment on an issue or pull request.
type Comment struct {
	ID        int64     `json:"id"`
	Body      string    `json:"body"`
	User      User      `json:"user"`
	HTMLURL   string    `json:"html_url"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// File is a file's content at a ref.
type File struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	SHA     string `json:"sha"` // the git blob id
	Size    int64  `json:"size"`
	HTMLURL string `json:"html_url"`
	Content []byte `json:"-"`
}

// contentJSON is the contents API's answer for one file.
type contentJSON struct {
	File
	Type     string `json:"type"` // "file", "dir", "symlink" or "submodule"
	Encoding string `json:"encoding"`
	Content  string `json:"content"`
}

package githubapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// ListIssues lists one page of the repository's issues in state (""
// means open), newest first. Pull requests, which GitHub's issue list
// includes, are left out, so a page may hold fewer than PerPage issues even
// when Page.Next is not 0.
func (c *Client) ListIssues(ctx context.Context, state State, opt ListOptions) ([]Issue, Page, error) {
	q, err := state.query(opt)
	if err != nil {
		return nil, Page{}, err
	}
	var wire []issueJSON
	resp, err := c.call(ctx, "list issues", http.MethodGet, "issues", q, nil, &wire)
	if err != nil {
		return nil, Page{}, err
	}
	issues := []Issue{}
	for i := range wire {
		if is := wire[i].issue(); !is.IsPullRequest {
			issues = append(issues, is)
		}
	}
	return issues, parseLink(resp.Header.Get("Link")), nil
}

// GetIssue returns issue number. For a pull request's number it returns the
// pull request seen as an issue, with IsPullRequest set, as GitHub does.
func (c *Client) GetIssue(ctx context.Context, number int) (*Issue, error) {
	if err := checkNumber(number); err != nil {
		return nil, err
	}
	var wire issueJSON
	if _, err := c.call(ctx, fmt.Sprintf("get issue #%d", number), http.MethodGet, "issues/"+strconv.Itoa(number), nil, nil, &wire); err != nil {
		return nil, err
	}
	is := wire.issue()
	return &is, nil
}

// ListPulls lists one page of the repository's pull requests in state (""
// means open), newest first.
func (c *Client) ListPulls(ctx context.Context, state State, opt ListOptions) ([]Pull, Page, error) {
	q, err := state.query(opt)
	if err != nil {
		return nil, Page{}, err
	}
	var pulls []Pull
	resp, err := c.call(ctx, "list pull requests", http.MethodGet, "pulls", q, nil, &pulls)
	if err != nil {
		return nil, Page{}, err
	}
	for i := range pulls {
		pulls[i] = pulls[i].withDerived()
	}
	if pulls == nil {
		pulls = []Pull{}
	}
	return pulls, parseLink(resp.Header.Get("Link")), nil
}

// GetPull returns pull request number.
func (c *Client) GetPull(ctx context.Context, number int) (*Pull, error) {
	if err := checkNumber(number); err != nil {
		return nil, err
	}
	var p Pull
	if _, err := c.call(ctx, fmt.Sprintf("get pull request #%d", number), http.MethodGet, "pulls/"+strconv.Itoa(number), nil, nil, &p); err != nil {
		return nil, err
	}
	p = p.withDerived()
	return &p, nil
}

// ListComments lists one page of the comments on issue or pull request
// number, oldest first.
func (c *Client) ListComments(ctx context.Context, number int, opt ListOptions) ([]Comment, Page, error) {
	if err := checkNumber(number); err != nil {
		return nil, Page{}, err
	}
	q, err := opt.query(nil)
	if err != nil {
		return nil, Page{}, err
	}
	var comments []Comment
	resp, err := c.call(ctx, fmt.Sprintf("list comments of #%d", number), http.MethodGet, "issues/"+strconv.Itoa(number)+"/comments", q, nil, &comments)
	if err != nil {
		return nil, Page{}, err
	}
	if comments == nil {
		comments = []Comment{}
	}
	return comments, parseLink(resp.Header.Get("Link")), nil
}

// maxRef bounds a ref: git allows long names, but nothing a UI names is
// longer than this.
const maxRef = 255

// GetFile returns the file at path (slash-separated, relative to the
// repository's root) on ref, or on the default branch if ref is empty. A
// directory, symlink or submodule is ErrNotAFile; a file over 1 MB, which
// the contents API does not return inline, is ErrFileTooLarge.
func (c *Client) GetFile(ctx context.Context, path, ref string) (*File, error) {
	escaped, err := escapeFilePath(path)
	if err != nil {
		return nil, err
	}
	var q url.Values
	if ref != "" {
		if len(ref) > maxRef || strings.ContainsFunc(ref, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return nil, fmt.Errorf("githubapi: ref %s is longer than %d bytes or has control characters: %w", quote(ref), maxRef, ErrInvalidInput)
		}
		q = url.Values{"ref": {ref}}
	}
	op := "get file " + quote(path)
	var raw json.RawMessage
	if _, err := c.call(ctx, op, http.MethodGet, "contents/"+escaped, q, nil, &raw); err != nil {
		return nil, err
	}
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		return nil, fmt.Errorf("githubapi: %s: it is a directory: %w", op, ErrNotAFile)
	}
	var wire contentJSON
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, fmt.Errorf("githubapi: %s: GitHub's answer is not the expected JSON: %v", op, err)
	}
	switch {
	case wire.Type != "file":
		return nil, fmt.Errorf("githubapi: %s: it is a %s: %w", op, quote(wire.Type), ErrNotAFile)
	case wire.Encoding == "none" || wire.Content == "" && wire.Size > 0:
		return nil, fmt.Errorf("githubapi: %s: %d bytes is more than the contents API returns (1 MB): %w", op, wire.Size, ErrFileTooLarge)
	case wire.Encoding != "base64":
		return nil, fmt.Errorf("githubapi: %s: unexpected encoding %s", op, quote(wire.Encoding))
	}
	// GitHub breaks the base64 into lines; the decoder skips \r and \n.
	content, err := base64.StdEncoding.DecodeString(wire.Content)
	if err != nil {
		return nil, fmt.Errorf("githubapi: %s: the content is not valid base64: %v", op, err)
	}
	if int64(len(content)) != wire.Size {
		return nil, fmt.Errorf("githubapi: %s: GitHub said %d bytes but sent %d", op, wire.Size, len(content))
	}
	f := wire.File
	f.Content = content
	return &f, nil
}

// CreateIssue opens an issue. labels that do not exist in the repository
// are created by GitHub (if the token may push) or dropped.
func (c *Client) CreateIssue(ctx context.Context, title, body string, labels []string) (*Issue, error) {
	in := struct {
		Title  string   `json:"title"`
		Body   string   `json:"body,omitempty"`
		Labels []string `json:"labels,omitempty"`
	}{title, body, labels}
	var wire issueJSON
	if _, err := c.call(ctx, "create issue", http.MethodPost, "issues", nil, in, &wire); err != nil {
		return nil, err
	}
	is := wire.issue()
	return &is, nil
}

// CreateComment adds a comment to issue or pull request number.
func (c *Client) CreateComment(ctx context.Context, number int, body string) (*Comment, error) {
	if err := checkNumber(number); err != nil {
		return nil, err
	}
	in := struct {
		Body string `json:"body"`
	}{body}
	var cm Comment
	if _, err := c.call(ctx, fmt.Sprintf("comment on #%d", number), http.MethodPost, "issues/"+strconv.Itoa(number)+"/comments", nil, in, &cm); err != nil {
		return nil, err
	}
	return &cm, nil
}

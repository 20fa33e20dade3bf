package github

// Design: a Service is immutable after NewService. Each binding's capability
// (a gatekeeper) holds its own githubapi.Client, which is immutable and safe
// for concurrent use; a gatekeeper holds no locks and starts no goroutines.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubpb"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/fetch"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/githubapi"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/kindkit"
)

// KindName is the kind's name in the configuration and in bindings.
const KindName = "github"

// DefaultAPI is the API base URL when the service does not set api.
const DefaultAPI = "https://api.github.com"

// Option configures the services of the kind.
type Option func(*options)

type options struct {
	fetch []fetch.Option
}

// WithFetchOptions passes options (a resolver, a timeout, size bounds) to
// the fetch.Client under every githubapi.Client the services make. Tests
// use it to resolve a name to 127.0.0.1.
func WithFetchOptions(opts ...fetch.Option) Option {
	return func(o *options) { o.fetch = append(o.fetch, opts...) }
}

// Kind returns the github kind, whose services are configured with opts.
func Kind(opts ...Option) gatekeepers.Kind {
	return gatekeepers.Kind{
		Name:   KindName,
		Schema: Schema(),
		Methods: map[string]gatekeepers.Effect{
			"describe":     gatekeepers.Observe,
			"listIssues":   gatekeepers.Observe,
			"getIssue":     gatekeepers.Observe,
			"listPulls":    gatekeepers.Observe,
			"getPull":      gatekeepers.Observe,
			"listComments": gatekeepers.Observe,
			"readFile":     gatekeepers.Observe,
			"createIssue":  gatekeepers.Act,
			"addComment":   gatekeepers.Act,
		},
		NewService: func(name string, cfg gatekeepers.ServiceConfig) (gatekeepers.Service, error) {
			s, err := NewService(name, cfg, opts...)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Details: details,
	}
}

// details shows an action's whole text: an issue's title, labels and body,
// or a comment's issue and body.
func details(_ string, raw []byte) string {
	p, err := decodePayload(gatekeepers.Action{Payload: raw})
	if err != nil {
		return err.Error()
	}
	if p.Op == opAddComment {
		return fmt.Sprintf("comment on #%d:\n\n%s", p.Number, p.Body)
	}
	d := "title: " + p.Title
	if len(p.Labels) > 0 {
		d += "\nlabels: " + strings.Join(p.Labels, ", ")
	}
	return d + "\n\n" + p.Body
}

// Service is one configured github service.
type Service struct {
	name         string
	api          string
	token        string // never in an error, a result or a String
	allowPrivate bool
	fetch        []fetch.Option
}

var (
	_ gatekeepers.Service    = (*Service)(nil)
	_ gatekeepers.Reconciler = (*Service)(nil)
)

// NewService builds the service configured as [services.name]: settings
// api, token_env (required) and allow_private_api.
func NewService(name string, cfg gatekeepers.ServiceConfig, opts ...Option) (*Service, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	set := kindkit.ReadSettings(KindName, name, cfg.Settings)
	s := &Service{
		name:         name,
		api:          set.String("api", DefaultAPI),
		allowPrivate: set.Bool("allow_private_api"),
		fetch:        o.fetch,
	}
	tokenEnv := set.String("token_env", "")
	if err := set.Err(); err != nil {
		return nil, err
	}
	switch {
	case tokenEnv == "":
		return nil, fmt.Errorf("github service %q: token_env: required: the name of the server's environment variable that holds the GitHub token", name)
	case cfg.Getenv == nil:
		return nil, fmt.Errorf("github service %q: token_env: the service has no environment to read %s from", name, tokenEnv)
	}
	if s.token = cfg.Getenv(tokenEnv); s.token == "" {
		return nil, fmt.Errorf("github service %q: token_env: the environment variable %s is not set or is empty", name, tokenEnv)
	}
	// githubapi owns the rules for a base URL and a token: try them on a
	// well-formed repository name.
	if _, err := s.newClient("gadgetd", "check"); err != nil {
		return nil, fmt.Errorf("github service %q: %w", name, err)
	}
	return s, nil
}

func (s *Service) newClient(owner, repo string) (*githubapi.Client, error) {
	var opts []githubapi.Option
	if s.allowPrivate {
		opts = append(opts, githubapi.WithAllowPrivateBase())
	}
	return githubapi.New(s.api, owner, repo, s.token, append(opts, githubapi.WithFetchOptions(s.fetch...))...)
}

// String describes the service without its token.
func (s *Service) String() string { return fmt.Sprintf("github service %q at %s", s.name, s.api) }

// GoString is String, so that %#v does not print the token either.
func (s *Service) GoString() string { return s.String() }

// Resource checks that spec names one repository, "owner/repo", and
// returns it. GitHub resolves names case-insensitively.
func (s *Service) Resource(spec string) (string, error) {
	_, err := s.client(spec)
	if err != nil {
		return "", err
	}
	return spec, nil
}

// client returns the client of repository spec.
func (s *Service) client(spec string) (*githubapi.Client, error) {
	owner, repo, ok := strings.Cut(spec, "/")
	if !ok || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("github service %q: resource %s is not one repository, \"owner/repo\"", s.name, kindkit.Quote(spec))
	}
	c, err := s.newClient(owner, repo)
	if err != nil {
		return nil, fmt.Errorf("github service %q: resource %s: %w", s.name, kindkit.Quote(spec), err)
	}
	return c, nil
}

// Gatekeeper returns the githubpb.GitHub capability of binding b.
func (s *Service) Gatekeeper(b gatekeepers.Binding, calls gatekeepers.Calls) capnp.Client {
	c, err := s.client(b.Resource)
	if err != nil {
		return capnp.ErrorClient(err)
	}
	return capnp.Client(githubpb.GitHub_ServerToClient(&gatekeeper{binding: b, calls: calls, gh: c}))
}

// Payloads: the kind's encoding of an action's real call. Op says which.
const (
	opCreateIssue = "createIssue"
	opAddComment  = "addComment"
)

type payload struct {
	Op     string   `json:"op"`
	Number int      `json:"number,omitempty"` // addComment's issue
	Title  string   `json:"title,omitempty"`
	Body   string   `json:"body,omitempty"`
	Labels []string `json:"labels,omitempty"`
}

func decodePayload(a gatekeepers.Action) (payload, error) {
	var p payload
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return p, fmt.Errorf("github: action %s: the payload does not decode: %v", a.ID, err)
	}
	if p.Op != opCreateIssue && p.Op != opAddComment {
		return p, fmt.Errorf("github: action %s: unknown operation %s", a.ID, kindkit.Quote(p.Op))
	}
	return p, nil
}

// result is an applied action's Outcome.Result: what it created.
type result struct {
	Issue     int    `json:"issue"`
	CommentID int64  `json:"commentId,omitempty"`
	URL       string `json:"url"`
}

func outcome(repo string, r result) (gatekeepers.Outcome, error) {
	raw, err := json.Marshal(r)
	if r.CommentID != 0 {
		return gatekeepers.Outcome{Describe: fmt.Sprintf("commented on #%d of %s", r.Issue, repo), Result: raw}, err
	}
	return gatekeepers.Outcome{Describe: fmt.Sprintf("created issue #%d in %s", r.Issue, repo), Result: raw}, err
}

// Apply creates the issue or comment that an action queued, marked with the
// action's id.
func (s *Service) Apply(ctx context.Context, b gatekeepers.Binding, a gatekeepers.Action) (gatekeepers.Outcome, error) {
	p, err := decodePayload(a)
	if err != nil {
		return gatekeepers.Outcome{}, err
	}
	c, err := s.client(b.Resource)
	if err != nil {
		return gatekeepers.Outcome{}, err
	}
	body := withMarker(p.Body, a.ID)
	switch p.Op {
	case opCreateIssue:
		is, err := c.CreateIssue(ctx, p.Title, body, p.Labels)
		if err != nil {
			return gatekeepers.Outcome{}, err
		}
		return outcome(b.Resource, result{Issue: is.Number, URL: is.HTMLURL})
	default: // opAddComment
		cm, err := c.CreateComment(ctx, p.Number, body)
		if err != nil {
			return gatekeepers.Outcome{}, err
		}
		return outcome(b.Resource, result{Issue: p.Number, CommentID: cm.ID, URL: cm.HTMLURL})
	}
}

// How far Reconcile looks: at most reconcilePages pages of 100, and nothing
// created more than clockSkew before the action was queued (the real call
// was made after that, by GitHub's clock, which may differ from ours).
const (
	reconcilePages   = 10
	reconcilePerPage = 100
	clockSkew        = 10 * time.Minute
)

// errUndecided: Reconcile looked as far as it may and could not tell.
var errUndecided = errors.New("could not tell whether the action was applied")

// Reconcile tells whether an action's issue or comment exists, by its
// marker. It reports an error (and the kernel keeps the action in doubt)
// when it cannot look back far enough to be sure.
func (s *Service) Reconcile(ctx context.Context, b gatekeepers.Binding, a gatekeepers.Action) (bool, gatekeepers.Outcome, error) {
	p, err := decodePayload(a)
	if err != nil {
		return false, gatekeepers.Outcome{}, err
	}
	c, err := s.client(b.Resource)
	if err != nil {
		return false, gatekeepers.Outcome{}, err
	}
	since := a.CreatedAt.Add(-clockSkew)
	older := func(t time.Time) bool { return !a.CreatedAt.IsZero() && t.Before(since) }
	if p.Op == opCreateIssue {
		for page := 1; page <= reconcilePages; page++ {
			issues, next, err := c.ListIssues(ctx, githubapi.StateAll, githubapi.ListOptions{Page: page, PerPage: reconcilePerPage})
			if err != nil {
				return false, gatekeepers.Outcome{}, err
			}
			for _, is := range issues { // newest first
				if hasMarker(is.Body, a.ID) {
					o, err := outcome(b.Resource, result{Issue: is.Number, URL: is.HTMLURL})
					return true, o, err
				}
				if older(is.CreatedAt) {
					return false, gatekeepers.Outcome{}, nil
				}
			}
			if next.Next == 0 {
				return false, gatekeepers.Outcome{}, nil
			}
		}
		return false, gatekeepers.Outcome{}, fmt.Errorf("github: action %s: %w: more than %d issues in %s since it was queued", a.ID, errUndecided, reconcilePages*reconcilePerPage, b.Resource)
	}

	// Comments are listed oldest first: read from the last page back.
	opt := githubapi.ListOptions{Page: 1, PerPage: reconcilePerPage}
	comments, page, err := c.ListComments(ctx, p.Number, opt)
	if err != nil {
		return false, gatekeepers.Outcome{}, err
	}
	for n, read := max(page.Last, 1), 0; ; n, read = n-1, read+1 {
		if n != 1 {
			if read == reconcilePages {
				return false, gatekeepers.Outcome{}, fmt.Errorf("github: action %s: %w: more than %d comments on #%d of %s", a.ID, errUndecided, reconcilePages*reconcilePerPage, p.Number, b.Resource)
			}
			opt.Page = n
			if comments, _, err = c.ListComments(ctx, p.Number, opt); err != nil {
				return false, gatekeepers.Outcome{}, err
			}
		}
		for i := len(comments) - 1; i >= 0; i-- {
			cm := comments[i]
			if hasMarker(cm.Body, a.ID) {
				o, err := outcome(b.Resource, result{Issue: p.Number, CommentID: cm.ID, URL: cm.HTMLURL})
				return true, o, err
			}
			if older(cm.CreatedAt) {
				return false, gatekeepers.Outcome{}, nil
			}
		}
		if n <= 1 {
			return false, gatekeepers.Outcome{}, nil
		}
	}
}

// The marker Apply appends to a body: an HTML comment, which GitHub does
// not render.
const (
	markerPrefix = "<!-- gadgetd-action:"
	markerSuffix = " -->"
)

func marker(actionID string) string { return markerPrefix + actionID + markerSuffix }

func withMarker(body, actionID string) string {
	if body == "" {
		return marker(actionID)
	}
	return body + "\n\n" + marker(actionID)
}

// hasMarker reports whether body ends with actionID's marker: Apply's is
// always last, after anything the gadget wrote.
func hasMarker(body, actionID string) bool {
	return strings.HasSuffix(strings.TrimRight(body, " \t\r\n"), marker(actionID))
}

// withoutMarker removes a trailing marker, so a gadget reads back what it
// wrote.
func withoutMarker(body string) string {
	trimmed := strings.TrimRight(body, " \t\r\n")
	if !strings.HasSuffix(trimmed, markerSuffix) {
		return body
	}
	i := strings.LastIndex(trimmed, markerPrefix)
	if i < 0 || strings.ContainsAny(trimmed[i:], "\r\n") {
		return body
	}
	return strings.TrimRight(trimmed[:i], " \t\r\n")
}

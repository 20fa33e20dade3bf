package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubpb"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/githubapi"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/kindkit"
	"github.com/gadgetd/gadgetd/schema"
)

// gatekeeper serves githubpb.GitHub for one binding.
type gatekeeper struct {
	binding gatekeepers.Binding
	calls   gatekeepers.Calls
	gh      *githubapi.Client // of the binding's repository only
}

func (g *gatekeeper) repo() string { return g.binding.Resource }

func (g *gatekeeper) Describe(ctx context.Context, call schema.Gatekeeper_describe) error {
	return kindkit.Describe(ctx, g.binding, g.calls, call)
}

// stateName is how an audit line names a list's state.
func stateName(state string) string {
	if state == "" {
		return string(githubapi.StateOpen)
	}
	return kindkit.Quote(state)
}

func pageNumber(page uint32) int { return max(int(page), 1) }

func (g *gatekeeper) ListIssues(ctx context.Context, call githubpb.GitHub_listIssues) error {
	state, err := call.Args().State()
	if err != nil {
		return err
	}
	page := pageNumber(call.Args().Page())
	g.calls.Describe(ctx, fmt.Sprintf("list %s issues of %s, page %d", stateName(state), g.repo(), page))
	issues, next, err := g.gh.ListIssues(ctx, githubapi.State(state), githubapi.ListOptions{Page: page})
	if err != nil {
		return err
	}
	// The pending issues are open and the newest: first on the first page.
	var pending []pendingAction
	if page == 1 && githubapi.State(state) != githubapi.StateClosed {
		if pending, err = g.pending(ctx, opCreateIssue, 0); err != nil {
			return err
		}
		slices.Reverse(pending)
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewIssues(int32(len(pending) + len(issues)))
	if err != nil {
		return err
	}
	for i, p := range pending {
		if err := setPendingIssue(list.At(i), p); err != nil {
			return err
		}
	}
	for i := range issues {
		if err := setIssue(list.At(len(pending)+i), &issues[i]); err != nil {
			return err
		}
	}
	res.SetNextPage(uint32(next.Next))
	return nil
}

func (g *gatekeeper) GetIssue(ctx context.Context, call githubpb.GitHub_getIssue) error {
	n := int(call.Args().Number())
	g.calls.Describe(ctx, fmt.Sprintf("read issue #%d of %s", n, g.repo()))
	is, err := g.gh.GetIssue(ctx, n)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	out, err := res.NewIssue()
	if err != nil {
		return err
	}
	return setIssue(out, is)
}

func (g *gatekeeper) ListPulls(ctx context.Context, call githubpb.GitHub_listPulls) error {
	state, err := call.Args().State()
	if err != nil {
		return err
	}
	page := pageNumber(call.Args().Page())
	g.calls.Describe(ctx, fmt.Sprintf("list %s pull requests of %s, page %d", stateName(state), g.repo(), page))
	pulls, next, err := g.gh.ListPulls(ctx, githubapi.State(state), githubapi.ListOptions{Page: page})
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewPulls(int32(len(pulls)))
	if err != nil {
		return err
	}
	for i := range pulls {
		if err := setPull(list.At(i), &pulls[i]); err != nil {
			return err
		}
	}
	res.SetNextPage(uint32(next.Next))
	return nil
}

func (g *gatekeeper) GetPull(ctx context.Context, call githubpb.GitHub_getPull) error {
	n := int(call.Args().Number())
	g.calls.Describe(ctx, fmt.Sprintf("read pull request #%d of %s", n, g.repo()))
	p, err := g.gh.GetPull(ctx, n)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	out, err := res.NewPull()
	if err != nil {
		return err
	}
	return setPull(out, p)
}

func (g *gatekeeper) ListComments(ctx context.Context, call githubpb.GitHub_listComments) error {
	n, page := int(call.Args().Number()), pageNumber(call.Args().Page())
	g.calls.Describe(ctx, fmt.Sprintf("list comments on #%d of %s, page %d", n, g.repo(), page))
	comments, next, err := g.gh.ListComments(ctx, n, githubapi.ListOptions{Page: page})
	if err != nil {
		return err
	}
	// The pending comments are the newest: last on the last page.
	var pending []pendingAction
	if next.Next == 0 {
		if pending, err = g.pending(ctx, opAddComment, n); err != nil {
			return err
		}
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewComments(int32(len(comments) + len(pending)))
	if err != nil {
		return err
	}
	for i := range comments {
		if err := setComment(list.At(i), n, &comments[i]); err != nil {
			return err
		}
	}
	for i, p := range pending {
		if err := setPendingComment(list.At(len(comments)+i), p); err != nil {
			return err
		}
	}
	res.SetNextPage(uint32(next.Next))
	return nil
}

func (g *gatekeeper) ReadFile(ctx context.Context, call githubpb.GitHub_readFile) error {
	path, err := call.Args().Path()
	if err != nil {
		return err
	}
	ref, err := call.Args().Ref()
	if err != nil {
		return err
	}
	line := fmt.Sprintf("read file %s of %s", kindkit.Quote(path), g.repo())
	if ref != "" {
		line += " at " + kindkit.Quote(ref)
	}
	g.calls.Describe(ctx, line)
	f, err := g.gh.GetFile(ctx, path, ref)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	out, err := res.NewFile()
	if err != nil {
		return err
	}
	out.SetSize(uint64(f.Size))
	return errors.Join(out.SetPath(f.Path), out.SetName(f.Name), out.SetSha(f.SHA), out.SetUrl(f.HTMLURL), out.SetContent(f.Content))
}

// GitHub's limits, checked before an action is queued so that a human is
// not asked to approve what GitHub would refuse.
const (
	maxTitle  = 256   // characters
	maxBody   = 65536 // characters, the marker included
	maxLabels = 100
	maxLabel  = 50 // characters of a label's name
)

// maxGadgetBody leaves room for the marker Apply appends (an action id is
// far shorter than the 100 characters kept for it).
const maxGadgetBody = maxBody - 100

func (g *gatekeeper) CreateIssue(ctx context.Context, call githubpb.GitHub_createIssue) error {
	args := call.Args()
	title, err := args.Title()
	if err != nil {
		return err
	}
	body, err := args.Body()
	if err != nil {
		return err
	}
	labelList, err := args.Labels()
	if err != nil {
		return err
	}
	g.calls.Describe(ctx, fmt.Sprintf("create issue %s in %s", kindkit.Quote(title), g.repo()))
	p := payload{Op: opCreateIssue, Title: title, Body: body}
	if labelList.Len() > maxLabels {
		return fmt.Errorf("github: createIssue: %d labels, more than %d", labelList.Len(), maxLabels)
	}
	for i := 0; i < labelList.Len(); i++ {
		l, err := labelList.At(i)
		if err != nil {
			return err
		}
		if n := utf8.RuneCountInString(l); strings.TrimSpace(l) == "" || n > maxLabel {
			return fmt.Errorf("github: createIssue: label %s is empty or longer than %d characters", kindkit.Quote(l), maxLabel)
		}
		p.Labels = append(p.Labels, l)
	}
	switch n := utf8.RuneCountInString(title); {
	case strings.TrimSpace(title) == "":
		return errors.New("github: createIssue: the title is empty")
	case n > maxTitle:
		return fmt.Errorf("github: createIssue: the title has %d characters, more than %d", n, maxTitle)
	}
	if err := checkBody(body); err != nil {
		return fmt.Errorf("github: createIssue: %w", err)
	}
	a, err := g.queue(ctx, p)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	out, err := res.NewIssue()
	if err != nil {
		return err
	}
	return setPendingIssue(out, pendingAction{Action: a, payload: p})
}

func (g *gatekeeper) AddComment(ctx context.Context, call githubpb.GitHub_addComment) error {
	n := int(call.Args().Number())
	body, err := call.Args().Body()
	if err != nil {
		return err
	}
	g.calls.Describe(ctx, fmt.Sprintf("comment on #%d of %s", n, g.repo()))
	switch {
	case n <= 0:
		return errors.New("github: addComment: the issue number is 0 (a pending issue has no number until it is created)")
	case strings.TrimSpace(body) == "":
		return errors.New("github: addComment: the body is empty")
	}
	if err := checkBody(body); err != nil {
		return fmt.Errorf("github: addComment: %w", err)
	}
	p := payload{Op: opAddComment, Number: n, Body: body}
	a, err := g.queue(ctx, p)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	out, err := res.NewComment()
	if err != nil {
		return err
	}
	return setPendingComment(out, pendingAction{Action: a, payload: p})
}

func checkBody(body string) error {
	if n := utf8.RuneCountInString(body); n > maxGadgetBody {
		return fmt.Errorf("the body has %d characters, more than %d", n, maxGadgetBody)
	}
	return nil
}

func (g *gatekeeper) queue(ctx context.Context, p payload) (gatekeepers.Action, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return gatekeepers.Action{}, err
	}
	return g.calls.Queue(ctx, raw)
}

// pendingAction is a pending action of the binding with its payload decoded.
type pendingAction struct {
	gatekeepers.Action
	payload payload
}

// pending returns the binding's pending actions of op, oldest first; for
// addComment, those on issue number.
func (g *gatekeeper) pending(ctx context.Context, op string, number int) ([]pendingAction, error) {
	actions, err := g.calls.Pending(ctx)
	if err != nil {
		return nil, err
	}
	var out []pendingAction
	for _, a := range actions {
		p, err := decodePayload(a)
		if err != nil || p.Op != op || op == opAddComment && p.Number != number {
			continue
		}
		out = append(out, pendingAction{Action: a, payload: p})
	}
	return out, nil
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func setLabels(newList func(int32) (capnp.TextList, error), names []string) error {
	list, err := newList(int32(len(names)))
	if err != nil {
		return err
	}
	for i, n := range names {
		if err := list.Set(i, n); err != nil {
			return err
		}
	}
	return nil
}

func labelNames(labels []githubapi.Label) []string {
	names := make([]string, len(labels))
	for i, l := range labels {
		names[i] = l.Name
	}
	return names
}

func setIssue(out githubpb.Issue, is *githubapi.Issue) error {
	out.SetNumber(uint32(is.Number))
	out.SetComments(uint32(is.Comments))
	out.SetCreatedAt(unix(is.CreatedAt))
	out.SetUpdatedAt(unix(is.UpdatedAt))
	out.SetClosedAt(unix(is.ClosedAt))
	return errors.Join(out.SetTitle(is.Title), out.SetBody(withoutMarker(is.Body)), out.SetState(is.State),
		out.SetAuthor(is.User.Login), out.SetUrl(is.HTMLURL), setLabels(out.NewLabels, labelNames(is.Labels)))
}

func setPendingIssue(out githubpb.Issue, p pendingAction) error {
	out.SetPending(true)
	out.SetCreatedAt(unix(p.CreatedAt))
	out.SetUpdatedAt(unix(p.CreatedAt))
	return errors.Join(out.SetTitle(p.payload.Title), out.SetBody(p.payload.Body), out.SetState(string(githubapi.StateOpen)),
		out.SetActionId(p.ID), setLabels(out.NewLabels, p.payload.Labels))
}

func setPull(out githubpb.Pull, p *githubapi.Pull) error {
	out.SetNumber(uint32(p.Number))
	out.SetDraft(p.Draft)
	out.SetMerged(p.Merged)
	out.SetCreatedAt(unix(p.CreatedAt))
	out.SetUpdatedAt(unix(p.UpdatedAt))
	out.SetClosedAt(unix(p.ClosedAt))
	out.SetMergedAt(unix(p.MergedAt))
	return errors.Join(out.SetTitle(p.Title), out.SetBody(withoutMarker(p.Body)), out.SetState(p.State),
		out.SetAuthor(p.User.Login), out.SetUrl(p.HTMLURL), setLabels(out.NewLabels, labelNames(p.Labels)),
		out.SetHead(p.Head.Label), out.SetBase(p.Base.Label))
}

func setComment(out githubpb.Comment, issue int, c *githubapi.Comment) error {
	out.SetId(c.ID)
	out.SetIssue(uint32(issue))
	out.SetCreatedAt(unix(c.CreatedAt))
	out.SetUpdatedAt(unix(c.UpdatedAt))
	return errors.Join(out.SetBody(withoutMarker(c.Body)), out.SetAuthor(c.User.Login), out.SetUrl(c.HTMLURL))
}

func setPendingComment(out githubpb.Comment, p pendingAction) error {
	out.SetIssue(uint32(p.payload.Number))
	out.SetPending(true)
	out.SetCreatedAt(unix(p.CreatedAt))
	out.SetUpdatedAt(unix(p.CreatedAt))
	return errors.Join(out.SetBody(p.payload.Body), out.SetActionId(p.ID))
}

// Command issues is the gatekeeper example gadget: the issues of one GitHub
// repository, which the gadget reaches only through the binding its owner
// gave it under the name "repo" (issuespb.Issues).
//
// Build it with `gadgetd blueprint build examples/issues`.
//
// The gadget has no network. Host.gatekeeper("repo") is the only way it
// reaches GitHub, and only the repository bound under that name: listing
// issues is an observation, made at once and written to the owner's audit
// log; filing one is an action, answered at once with the issue marked
// pending, and created on GitHub only when the owner approves it. The
// gadget keeps nothing of its own: the pending issue it shows comes from
// the binding, which overlays its pending actions on what GitHub returns,
// and disappears if the owner rejects it.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/examples/issues/issuespb"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubpb"
	"github.com/gadgetd/gadgetd/guest"
	"github.com/gadgetd/gadgetd/schema"
)

func init() { guest.Serve(app{}) }

func main() {}

// binding is the name the gadget asks its host for.
const binding = "repo"

// Limits of what a user may file.
const (
	maxTitleBytes = 256
	maxBodyBytes  = 64 << 10
	maxIssues     = 100 // per page
)

type app struct{}

func (app) Open(ctx context.Context, call schema.Guest_open) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetSession(capnp.Client(issuespb.Issues_ServerToClient(session{})))
}

type session struct{}

// repo returns the bound repository's gatekeeper, or an error that says
// how to bind one.
func repo(ctx context.Context) (githubpb.GitHub, error) {
	gk, err := guest.Gatekeeper(ctx, binding)
	if err != nil {
		return githubpb.GitHub{}, fmt.Errorf("issues: this gadget has no GitHub repository bound as %q (bind one: gadgetd bind GADGET %s SERVICE OWNER/REPO): %w", binding, binding, err)
	}
	return githubpb.GitHub(gk), nil
}

func (session) Repository(ctx context.Context, call issuespb.Issues_repository) error {
	gh, err := repo(ctx)
	if err != nil {
		return err
	}
	defer gh.Release()
	res, release, err := gh.DescribeSync(ctx, nil)
	defer release()
	if err != nil {
		return fmt.Errorf("issues: %w", err)
	}
	d, err := res.Description()
	if err != nil {
		return err
	}
	name, err := d.Resource()
	if err != nil {
		return err
	}
	out, err := call.AllocResults()
	if err != nil {
		return err
	}
	return out.SetName(name)
}

func (session) List(ctx context.Context, call issuespb.Issues_list) error {
	gh, err := repo(ctx)
	if err != nil {
		return err
	}
	defer gh.Release()
	page := call.Args().Page()
	res, release, err := gh.ListIssuesSync(ctx, func(p githubpb.GitHub_listIssues_Params) error {
		p.SetPage(page + 1) // GitHub counts pages from 1
		return p.SetState("open")
	})
	defer release()
	if err != nil {
		return fmt.Errorf("issues: %w", err)
	}
	in, err := res.Issues()
	if err != nil {
		return err
	}
	out, err := call.AllocResults()
	if err != nil {
		return err
	}
	if next := res.NextPage(); next > 0 {
		out.SetNextPage(next - 1)
	}
	list, err := out.NewIssues(int32(min(in.Len(), maxIssues)))
	if err != nil {
		return err
	}
	for i := 0; i < list.Len(); i++ {
		if err := copyIssue(list.At(i), in.At(i)); err != nil {
			return err
		}
	}
	return nil
}

func (session) File(ctx context.Context, call issuespb.Issues_file) error {
	title, err := call.Args().Title()
	if err != nil {
		return err
	}
	body, err := call.Args().Body()
	if err != nil {
		return err
	}
	title = strings.TrimSpace(title)
	switch {
	case title == "":
		return errors.New("issues: the title is empty")
	case len(title) > maxTitleBytes || !utf8.ValidString(title):
		return fmt.Errorf("issues: the title must be valid UTF-8 of at most %d bytes", maxTitleBytes)
	case len(body) > maxBodyBytes || !utf8.ValidString(body):
		return fmt.Errorf("issues: the body must be valid UTF-8 of at most %d bytes", maxBodyBytes)
	}
	gh, err := repo(ctx)
	if err != nil {
		return err
	}
	defer gh.Release()
	res, release, err := gh.CreateIssueSync(ctx, func(p githubpb.GitHub_createIssue_Params) error {
		if err := p.SetTitle(title); err != nil {
			return err
		}
		return p.SetBody(body)
	})
	defer release()
	if err != nil {
		return fmt.Errorf("issues: %w", err)
	}
	in, err := res.Issue()
	if err != nil {
		return err
	}
	out, err := call.AllocResults()
	if err != nil {
		return err
	}
	issue, err := out.NewIssue()
	if err != nil {
		return err
	}
	return copyIssue(issue, in)
}

// copyIssue copies what the session shows of a GitHub issue.
func copyIssue(dst issuespb.Issue, src githubpb.Issue) error {
	dst.SetNumber(src.Number())
	dst.SetPending(src.Pending())
	for _, c := range []struct {
		get func() (string, error)
		set func(string) error
	}{
		{src.Title, dst.SetTitle},
		{src.State, dst.SetState},
		{src.Author, dst.SetAuthor},
		{src.Url, dst.SetUrl},
		{src.ActionId, dst.SetActionId},
	} {
		s, err := c.get()
		if err != nil {
			return err
		}
		if err := c.set(s); err != nil {
			return err
		}
	}
	return nil
}

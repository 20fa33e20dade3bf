package github_test

import (
	"context"
	"fmt"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/github"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubpb"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubtest"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/callstest"
)

func Example() {
	// A fake GitHub on loopback, with one repository.
	srv := githubtest.NewServer("the-token")
	defer srv.Close()
	srv.AddRepo("acme", "widgets").AddIssue(githubtest.Issue{Title: "Crash on start"})

	// [services.github] api = ..., token_env = "GITHUB_TOKEN", allow_private_api = true
	svc, err := github.NewService("github", gatekeepers.ServiceConfig{
		Settings: map[string]any{"api": srv.URL, "token_env": "GITHUB_TOKEN", "allow_private_api": true},
		Getenv: func(name string) string {
			if name == "GITHUB_TOKEN" {
				return "the-token"
			}
			return ""
		},
	})
	if err != nil {
		panic(err)
	}
	b := gatekeepers.Binding{Name: "repo", Kind: github.KindName, Resource: "acme/widgets"}
	calls := callstest.New(b) // the kernel's Calls is the durable ledger
	gh := githubpb.GitHub(svc.Gatekeeper(b, calls))
	defer gh.Release()
	ctx := context.Background()

	list := func() {
		f, release := gh.ListIssues(ctx, nil)
		defer release()
		issues, err := f.Struct()
		if err != nil {
			panic(err)
		}
		l, _ := issues.Issues()
		for i := 0; i < l.Len(); i++ {
			title, _ := l.At(i).Title()
			fmt.Printf("  #%d %s (pending: %v)\n", l.At(i).Number(), title, l.At(i).Pending())
		}
	}

	// An action is answered at once, with a simulated issue...
	f, release := gh.CreateIssue(ctx, func(p githubpb.GitHub_createIssue_Params) error { return p.SetTitle("Add a README") })
	created, err := f.Issue().Struct()
	if err != nil {
		panic(err)
	}
	fmt.Println("pending:", created.Pending(), "writes to GitHub:", srv.Writes())
	release()
	// ...which the binding's reads show.
	list()

	// Approved, it is made once; the real issue replaces the simulated one.
	a := calls.Actions()[0]
	out, err := svc.Apply(ctx, b, a)
	if err != nil {
		panic(err)
	}
	calls.Settle(a.ID, gatekeepers.Applied)
	fmt.Println(out.Describe)
	list()

	// After a crash, Reconcile finds it by its marker.
	applied, _, err := svc.Reconcile(ctx, b, a)
	fmt.Println("applied:", applied, err)
	// Output:
	// pending: true writes to GitHub: 0
	//   #0 Add a README (pending: true)
	//   #1 Crash on start (pending: false)
	// created issue #2 in acme/widgets
	//   #2 Add a README (pending: false)
	//   #1 Crash on start (pending: false)
	// applied: true <nil>
}

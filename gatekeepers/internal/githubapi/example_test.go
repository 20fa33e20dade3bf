package githubapi_test

import (
	"context"
	"fmt"

	"github.com/gadgetd/gadgetd/gatekeepers/github/githubtest"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/githubapi"
)

func Example() {
	// A fake GitHub on loopback, with one repository.
	srv := githubtest.NewServer("secret-token")
	defer srv.Close()
	repo := srv.AddRepo("octo", "hello")
	repo.AddIssue(githubtest.Issue{Title: "Crash on start", Labels: []string{"bug"}})
	repo.AddPull(githubtest.Pull{Title: "Fix the crash"})

	// In production: githubapi.New("https://api.github.com", owner, repo, os.Getenv(...)).
	c, err := githubapi.New(srv.URL, "octo", "hello", "secret-token", githubapi.WithAllowPrivateBase())
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if _, err := c.CreateIssue(ctx, "Add a README", "", nil); err != nil {
		fmt.Println(err)
		return
	}
	issues, page, err := c.ListIssues(ctx, githubapi.StateOpen, githubapi.ListOptions{PerPage: 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, is := range issues {
		fmt.Printf("#%d %s (by %s)\n", is.Number, is.Title, is.User.Login)
	}
	fmt.Println("next page:", page.Next)

	_, err = c.GetIssue(ctx, 42)
	fmt.Println(err)
	// Output:
	// #3 Add a README (by gadgetd-bot)
	// #1 Crash on start (by gadgetd-bot)
	// next page: 0
	// githubapi: get issue #42: GitHub answered 404: Not Found
}

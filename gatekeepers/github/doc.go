// Package github is the github gatekeeper kind: one GitHub repository,
// through package githubapi. Its interface is githubpb.GitHub
// (githubpb/github.capnp), which a gadget imports.
//
// # Configuration
//
//	[services.github]
//	kind = "github"
//	api = "https://api.github.com"   # the default; "https://HOST/api/v3" for GitHub Enterprise Server
//	token_env = "GITHUB_TOKEN"       # the NAME of the server's environment variable that holds the token
//	allow_private_api = false        # true lets api be on a loopback or private address
//
// The token is read from the environment (ServiceConfig.Getenv) when the
// service is built, never from the file. It is sent only by githubapi, only
// in the Authorization header of requests under the bound repository's API
// path, and it appears in no result, error, outcome or audit line.
//
// A binding's resource is one repository, "owner/repo". Its capability
// reaches that repository's API path and nothing else: the methods take no
// repository, and every request goes through a githubapi.Client (a
// fetch.Client whose only prefix is "<api>/repos/OWNER/REPO/"), so a file
// path, a redirect or a pagination link that leaves it is refused. The
// resource is checked again each time a capability is made and each time an
// action is applied.
//
// # Effects and the overlay
//
// listIssues, getIssue, listPulls, getPull, listComments and readFile are
// observations. createIssue and addComment are actions: checked now (an
// empty title or body, a body over GitHub's limit, a bad issue number),
// queued, and answered with a simulated Issue or Comment marked pending with
// its action id. Reads through the same binding overlay its pending actions
// (calls.Pending): listIssues of open or all issues shows the pending
// issues first on its first page, newest first; listComments of an issue
// shows its pending comments after the real ones on the last page. A
// pending issue has no number until it is created, so getIssue (which
// names a number) shows no pending issue, and a pending issue cannot be
// commented on.
//
// # Exactly once
//
// Apply creates the issue or comment with a hidden marker appended to its
// body, "<!-- gadgetd-action:ID -->". The Service is a
// gatekeepers.Reconciler: after a crash during Apply, Reconcile looks for an
// issue (among the repository's recent issues) or a comment (among the
// issue's recent comments) whose body ends with the action's marker, so that
// an action whose call took effect is not made twice. Only a body that ends
// with the marker counts: a gadget that writes another action's marker into
// its own text cannot make that action look applied, since its own marker
// follows. Bodies shown to gadgets have the marker removed.
package github

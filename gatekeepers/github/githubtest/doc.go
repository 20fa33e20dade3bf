// Package githubtest is an in-memory, GitHub-compatible REST API server on
// loopback, for tests of code that talks to GitHub: the github gatekeeper
// (through package githubapi), and the gadgets bound to one.
//
// It serves the endpoints githubapi uses, at GitHub's URL paths, with GitHub's
// JSON field names, status codes, error bodies and headers, so that the code
// under test is the production client, unchanged:
//
//	GET  /repos/{owner}/{repo}/issues                   list (includes pull requests, as GitHub does)
//	POST /repos/{owner}/{repo}/issues                   create; 422 for an empty title
//	GET  /repos/{owner}/{repo}/issues/{number}          one issue (or a pull request seen as an issue)
//	GET  /repos/{owner}/{repo}/issues/{number}/comments list
//	POST /repos/{owner}/{repo}/issues/{number}/comments create; 422 for an empty body
//	GET  /repos/{owner}/{repo}/pulls                    list
//	GET  /repos/{owner}/{repo}/pulls/{number}           one pull request
//	GET  /repos/{owner}/{repo}/contents/{path}?ref=     a file (base64) or a directory listing
//
// The same paths are served under /repositories/{id}/, the form GitHub uses in
// its Link pagination headers. Lists honour page and per_page (default 30,
// at most 100) and answer with a Link header (rel="prev", "next", "last",
// "first"). Issues and pull requests share one sequence of numbers per
// repository. Every request must carry the server's token as
// "Authorization: Bearer <token>" (or "token <token>"); otherwise the answer is
// 401 with GitHub's body. Rate limiting can be switched on with SetRateLimit.
// Every request is logged (Requests, Writes) so a test can prove that a call
// did, or did not, reach "GitHub".
//
// What it does not reproduce: other endpoints, other query parameters (sort,
// direction, since, labels, assignee filters), ETags and conditional requests,
// permissions beyond one all-powerful token (no read-only tokens, no private
// versus public repositories), 301 for renamed or transferred repositories and
// issues, 410 for deleted issues, the raw and HTML media types, the 100 MB
// blob limit (files over 1 MiB are answered with encoding "none" and empty
// content, as GitHub does up to 100 MB), symlinks and submodules in contents,
// secondary rate limits on content creation, and the many fields GitHub sends
// that a UI does not need (reactions, milestones, assignees, timelines).
package githubtest

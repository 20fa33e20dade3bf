// Package githubapi is a typed client of GitHub's REST API for one
// repository: what the github gatekeeper needs and nothing more.
//
// Observations: ListIssues, GetIssue, ListPulls, GetPull, ListComments and
// GetFile. Actions: CreateIssue and CreateComment. Lists return one page at a
// time, selected by page number (ListOptions), and say where the list
// continues (Page).
//
// # Confinement
//
// New validates the owner and repository name against GitHub's allowed
// characters and builds a fetch.Client whose only prefix is the repository's
// API path, "<base>/repos/OWNER/REPO/". Every request goes through it, so a
// request can reach no other repository, path or host, and loopback or
// private addresses only with WithAllowPrivateBase. Issue numbers must be
// positive; file paths are escaped segment by segment and may not contain
// ".", "..", empty segments, backslashes or control characters. GitHub's
// pagination links name the repository by id (/repositories/ID/), outside
// the prefix, so they are never followed: only their page numbers are read.
//
// # The token
//
// The token (from the server's environment, given to New) is sent only as
// "Authorization: Bearer <token>" to the prefix. It never appears in an
// error, in String or in GoString; GitHub's error text is shown with any
// occurrence of it redacted.
//
// # Errors
//
// A non-2xx answer is an *APIError with the status and GitHub's message,
// cleaned of control characters and bounded in length, matching ErrUnauthorized
// (401), ErrForbidden (403), ErrRateLimited (403 with X-RateLimit-Remaining: 0
// or Retry-After, or 429), ErrNotFound (404) or ErrValidation (422) under
// errors.Is. Input refused before anything is sent matches ErrInvalidInput.
// Transport failures wrap fetch's sentinels (fetch.ErrTimeout, ...).
//
// Package githubtest is a GitHub-compatible server for tests of this client
// and of its users.
package githubapi

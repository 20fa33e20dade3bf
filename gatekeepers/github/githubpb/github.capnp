# The github gatekeeper: one GitHub repository.
#
# A binding grants one repository, "owner/repo", of the GitHub API the
# operator configured, with a token from the server's environment that no
# gadget ever sees. Reading issues, pull requests, comments and files are
# observations, made at once. Creating an issue and adding a comment are
# actions: queued for a human to approve, and answered at once with a
# simulated Issue or Comment marked pending, with the action's id.
#
# Later reads through the same binding overlay the binding's pending
# actions: listIssues shows its pending issues first (on the first page of
# a list that can hold open issues), and listComments shows the pending
# comments of that issue last (on the last page). A pending issue has no
# number yet (0), so getIssue, listComments and addComment cannot name it.

@0xc744504106c12573;

using Go = import "/go.capnp";
using Gatekeeper = import "/schema/gatekeeper.capnp";
$Go.package("githubpb");
$Go.import("github.com/gadgetd/gadgetd/gatekeepers/github/githubpb");

interface GitHub extends(Gatekeeper.Gatekeeper) {
  listIssues @0 (state :Text, page :UInt32) -> (issues :List(Issue), nextPage :UInt32);
  # One page (1 if 0) of the issues in state ("open" if empty, "closed",
  # "all"), newest first, pull requests left out. nextPage is 0 on the last
  # page.

  getIssue @1 (number :UInt32) -> (issue :Issue);

  listPulls @2 (state :Text, page :UInt32) -> (pulls :List(Pull), nextPage :UInt32);
  # One page of the pull requests in state, newest first.

  getPull @3 (number :UInt32) -> (pull :Pull);

  listComments @4 (number :UInt32, page :UInt32) -> (comments :List(Comment), nextPage :UInt32);
  # One page of the comments on issue or pull request number, oldest first.

  readFile @5 (path :Text, ref :Text) -> (file :File);
  # The file at path ("docs/README.md") on ref (the default branch if
  # empty). Files over 1 MB and directories are refused.

  createIssue @6 (title :Text, body :Text, labels :List(Text)) -> (issue :Issue);
  # An action: queues the issue and answers with it, pending.

  addComment @7 (number :UInt32, body :Text) -> (comment :Comment);
  # An action: queues the comment on issue or pull request number and
  # answers with it, pending.
}

struct Issue {
  number @0 :UInt32;
  # 0 while pending.

  title @1 :Text;
  body @2 :Text;
  state @3 :Text;
  # "open" or "closed".

  author @4 :Text;
  # The author's login; empty while pending.

  url @5 :Text;
  # The issue's page on GitHub; empty while pending.

  labels @6 :List(Text);
  comments @7 :UInt32;
  # How many comments it has.

  createdAt @8 :Int64;
  # Unix seconds; for a pending issue, when it was queued.

  updatedAt @9 :Int64;
  closedAt @10 :Int64;
  # 0 while open.

  pending @11 :Bool;
  # A simulated issue: queued by this binding, waiting for approval.

  actionId @12 :Text;
  # The pending action, when pending.
}

struct Pull {
  number @0 :UInt32;
  title @1 :Text;
  body @2 :Text;
  state @3 :Text;
  # "open" or "closed"; a merged pull request is closed.

  author @4 :Text;
  url @5 :Text;
  labels @6 :List(Text);
  head @7 :Text;
  # The branch it merges from, "owner:ref".

  base @8 :Text;
  # The branch it merges into.

  draft @9 :Bool;
  merged @10 :Bool;
  createdAt @11 :Int64;
  updatedAt @12 :Int64;
  closedAt @13 :Int64;
  mergedAt @14 :Int64;
}

struct Comment {
  id @0 :Int64;
  # 0 while pending.

  issue @1 :UInt32;
  # The issue or pull request it is on.

  body @2 :Text;
  author @3 :Text;
  url @4 :Text;
  createdAt @5 :Int64;
  updatedAt @6 :Int64;
  pending @7 :Bool;
  actionId @8 :Text;
}

struct File {
  path @0 :Text;
  name @1 :Text;
  sha @2 :Text;
  # The git blob id.

  size @3 :UInt64;
  url @4 :Text;
  content @5 :Data;
}

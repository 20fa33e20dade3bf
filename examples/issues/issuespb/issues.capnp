# The session interface of the issues example blueprint: the issues of the
# GitHub repository the gadget's owner bound to it under the name "repo"
# (`gadgetd bind GADGET repo SERVICE OWNER/REPO`).
#
# Reading goes to GitHub at once, through the binding. Filing an issue is an
# action: the binding answers at once with the issue as it will be, marked
# pending, and GitHub sees it only once the owner approves it (`gadgetd
# actions`, `gadgetd approve`). Until then the pending issue shows in this
# gadget's own listing; once rejected, it is gone.
#
# Errors are ordinary Cap'n Proto exceptions whose reason starts with
# "issues:"; without a binding named "repo" every call fails with one that
# says how to bind it.

@0xa9d9bb2f3b7c51e4;

using Go = import "/go.capnp";
$Go.package("issuespb");
$Go.import("github.com/gadgetd/gadgetd/examples/issues/issuespb");

struct Issue {
  number @0 :UInt32;
  # 0 while pending: GitHub numbers an issue when it is created.
  title @1 :Text;
  state @2 :Text;
  # "open" or "closed".
  author @3 :Text;
  url @4 :Text;
  pending @5 :Bool;
  # Filed through this gadget and waiting for the owner's approval.
  actionId @6 :Text;
  # The pending action, for `gadgetd approve ID`.
}

interface Issues {
  repository @0 () -> (name :Text);
  # The bound repository, "owner/name".

  list @1 (page :UInt32) -> (issues :List(Issue), nextPage :UInt32);
  # Open issues, newest first, pending ones included; page 0 is the first,
  # and nextPage is 0 after the last.

  file @2 (title :Text, body :Text) -> (issue :Issue);
  # Files an issue: it waits for the owner's approval, and shows in `list`
  # as pending until then. The title must not be empty.
}

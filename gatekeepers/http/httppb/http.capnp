# The http gatekeeper: HTTP requests under one URL prefix.
#
# A binding grants one URL prefix ("https://api.example.com/v1/"), which
# lies under one of the prefixes the operator configured for the service.
# Every request, and every redirect, must stay under it: the same scheme,
# host and port, and a path at or below the prefix's at a segment boundary.
# Hosts that resolve to loopback, private or link-local addresses are
# refused unless the operator allowed that prefix. Credentials in a URL are
# stripped, and of the gadget's headers only those that describe the
# representation (Accept, Content-Type, If-*, Range, ...) are sent.
#
# get and head are observations: made at once. send is an action: queued
# for a human to approve, and answered at once with the action's id.

@0xf4d0a5fdb98cec97;

using Go = import "/go.capnp";
using Gatekeeper = import "/schema/gatekeeper.capnp";
$Go.package("httppb");
$Go.import("github.com/gadgetd/gadgetd/gatekeepers/http/httppb");

interface Http extends(Gatekeeper.Gatekeeper) {
  get @0 (url :Text, headers :List(Header)) -> (response :Response);
  # Fetches url, which must be under the binding's prefix.

  head @1 (url :Text, headers :List(Header)) -> (response :Response);
  # As get, without the body.

  send @2 (method :Text, url :Text, headers :List(Header), body :Data) -> (action :PendingAction);
  # Queues a POST, PUT, PATCH or DELETE of body to url for a human to
  # approve. Nothing is sent until then; the request is checked now (the
  # method, the URL under the prefix, the size), so a request that could
  # never be sent is refused rather than queued.
}

struct Header {
  name @0 :Text;
  value @1 :Text;
}

struct Response {
  status @0 :UInt16;
  headers @1 :List(Header);
  # Without Set-Cookie.

  body @2 :Data;
  # Whole: a response over the size bound fails the call rather than
  # being truncated.

  url @3 :Text;
  # The final URL, after redirects.
}

struct PendingAction {
  # A simulated result: the request is queued, not sent.

  actionId @0 :Text;
  # The action waiting for approval.

  description @1 :Text;
  # What will be sent once approved: "POST https://api.example.com/v1/items (12 bytes)".
}

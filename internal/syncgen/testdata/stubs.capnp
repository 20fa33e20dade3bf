# The schema syncgen's tests generate stubs for: nested, renamed, inherited
# from another package, streaming and generic methods.

@0x981b8171c958f5f9;

using Go = import "/go.capnp";
using Gk = import "/schema/gatekeeper.capnp";
using import "/capnp/stream.capnp".StreamResult;
$Go.package("stubspb");
$Go.import("example.com/stubspb");

interface Outer {
  ping @0 (n :UInt32) -> (n :UInt32);
  upload @1 (chunk :Data) -> stream;
  renamed @2 () -> () $Go.name("otherName");
  fetch @3 Query -> Reply;

  struct Box {
    interface Inner {
      get @0 () -> Reply;
    }
  }
}

struct Query {
  key @0 :Text;
}

struct Reply {
  value @0 :Text;
}

interface Child extends(Gk.Gatekeeper) {
  extra @0 () -> ();
}

interface Generic(T) {
  get @0 () -> (value :T);
}

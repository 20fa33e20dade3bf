# A method whose stub would take the name of another method's client.

@0x8bede4b1b3ce9297;

using Go = import "/go.capnp";
$Go.package("clashpb");
$Go.import("example.com/clashpb");

interface Clash {
  get @0 () -> ();
  getSync @1 () -> ();
}

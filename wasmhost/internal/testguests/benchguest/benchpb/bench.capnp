# A session for measuring the sandbox boundary itself (wasmhost benchmarks).

@0x9d3cd436dd3f3602;

using Go = import "/go.capnp";
$Go.package("benchpb");
$Go.import("github.com/gadgetd/gadgetd/wasmhost/internal/testguests/benchguest/benchpb");

interface Bench {
  noop @0 () -> ();
  # Returns at once: one host-to-guest call and nothing else.

  hostCalls @1 (n :UInt32) -> ();
  # Makes n sequential Storage.get calls to the host.

  crash @2 () -> ();
  # Panics, killing the instance.

  echo @3 (cap :Capability) -> (cap :Capability);
  # Answers with the capability it was given: a parameter capability handed
  # back in the same call's results.
}

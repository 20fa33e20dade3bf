# The session interface of the kernel's test counter (internal/testcounter).
# A copy of the counter example's schema with its own id, so the example can
# change without breaking the kernel's tests.

@0x91298a900953755f;

using Go = import "/go.capnp";
$Go.package("counterpb");
$Go.import("github.com/gadgetd/gadgetd/internal/testcounter/counterpb");

interface Counter {
  # A counter shared by everyone who opens the gadget, kept in its storage.

  increment @0 (by :Int64) -> (value :Int64);
  # Adds `by` (1 when zero) and returns the new value. Every watcher is told
  # about the new value before increment returns.

  get @1 () -> (value :Int64);
  # The current value.

  watch @2 (listener :Listener) -> (value :Int64);
  # Registers `listener` for changes made while this instance lives and
  # returns the current value. A listener whose call fails is dropped.
}

interface Listener {
  # Implemented by clients that want to hear about changes.

  changed @0 (value :Int64);
}

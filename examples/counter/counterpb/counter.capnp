# The session interface of the counter example blueprint.

@0xf7280933ea552ee6;

using Go = import "/go.capnp";
$Go.package("counterpb");
$Go.import("github.com/gadgetd/gadgetd/examples/counter/counterpb");

interface Counter {
  # A counter shared by everyone who opens the gadget, kept in its storage.

  increment @0 (by :Int64) -> (value :Int64);
  # Adds `by` (1 when zero) and returns the new value. Every watcher is told
  # about the new value before increment returns.

  get @1 () -> (value :Int64);
  # The current value.

  watch @2 (listener :Listener) -> (value :Int64, handle :Handle);
  # Subscribes `listener` to every later change and returns the current
  # value. The subscription lasts while you hold `handle`: drop it to
  # unsubscribe. Your listener being released means the subscription ended:
  # you dropped the handle, a call to the listener failed, or the instance
  # that held it stopped (evicted when idle, crashed, the server shut down).
  # Watch again to go on hearing.
}

interface Handle {
  # A subscription, held by the subscriber. It has no methods: dropping it
  # is the one thing to do with it.
}

interface Listener {
  # Implemented by clients that want to hear about changes.

  changed @0 (value :Int64);
}

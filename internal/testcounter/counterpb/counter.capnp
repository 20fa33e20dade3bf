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

  watch @2 (listener :Listener) -> (value :Int64, handle :Handle);
  # Subscribes `listener` to every later change and returns the current
  # value. The subscription lasts while you hold `handle`: drop it to
  # unsubscribe. Your listener being released means the subscription ended:
  # you dropped the handle, a call to the listener failed, or the instance
  # that held it stopped (evicted when idle, crashed, the server shut down).
  # Watch again to go on hearing.

  present @3 () -> (userNames :List(Text));
  # The names of the users whose sessions are open on this instance, asked
  # of each session's SessionContext now rather than remembered: a session
  # whose token was revoked since it opened is left out.

  keep @4 (thing :Capability);
  # Keeps `thing` in the one slot every session shares (releasing what was
  # there), as a registry or a shared board keeps what users hand it.

  kept @5 () -> (thing :Capability);
  # What the slot holds now.
}

interface Handle {
  # A subscription, held by the subscriber: drop it to unsubscribe. Its
  # methods let the kernel's tests reach the gadget through an object a
  # session handed out rather than through the session itself.

  get @0 () -> (value :Int64);
  # The counter's current value.

  watch @1 (listener :Listener) -> (handle :Handle);
  # Subscribes `listener` as Counter.watch does.
}

interface Listener {
  # Implemented by clients that want to hear about changes.

  changed @0 (value :Int64) -> (next :Listener);
  # `next`, when set, is subscribed too, for as long as this instance
  # lives or until a call to it fails: a follow-up subscription the
  # listener itself asked for.
}

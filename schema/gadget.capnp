# The sandbox side of gadgetd: what a gadget's WebAssembly guest exports to the
# host (Guest) and what the host lends to the guest (Host, Storage).
#
# A gadget never sees a network, a file system or another gadget. Everything it
# can touch arrives as a capability listed here, and every capability it hands
# back crosses the cap-table ABI described in docs/ABI.md.

@0xd662438f78e9d48d;

using Go = import "/go.capnp";
$Go.package("schema");
$Go.import("github.com/gadgetd/gadgetd/schema");

using Gatekeeper = import "gatekeeper.capnp";

enum Role {
  # What a user may do with a gadget. Ordered from least to most power, so the
  # zero value (viewer) is the safe default for a field nobody set. The
  # gadget's creator is its owner; everyone else holds the role it was
  # shared with them at (`Gadget.share`), or less if the share it hangs
  # below gives less.

  viewer @0;
  # May open sessions and see the UI.

  editor @1;
  # May also read the gadget's log (`Gadget.logs`).

  owner @2;
  # Full control. The creator of a gadget is its owner; a user it is shared
  # with as owner may do everything but remove it.
}

struct Caller {
  # Who is opening a session. The host fills this in from the authenticated
  # connection; a guest can trust it.

  userId @0 :Text;
  # The caller as this gadget knows them: a pseudonym, stable for one user
  # in this gadget (key a user's data by it), different in every other
  # gadget, and never the user's internal id.

  userName @1 :Text;
  # Human-readable login name, for display only.

  role @2 :Role;
  # The caller's role on this gadget when the session was opened. The
  # session ends (its calls and its context's fail, disconnected) if the
  # caller's role drops below it or their share is revoked, so a guest may
  # rely on it for the session's life.

  permissions @3 :List(Text);
  # The blueprint's own permissions (blueprint.json's "permissions") that
  # `role` bundles (its "roles"), by name, in the order the manifest
  # declares them: an owner has every one. Check the names you need, e.g.
  # "edit" before changing a note. Empty for a blueprint that declares
  # none: such a guest decides by `role` alone. The platform computes the
  # set; enforcing it is the guest's job (docs/SECURITY.md).
}

interface Guest {
  # The main object every gadget guest exports (guest export index 0).

  open @0 (caller :Caller, context :SessionContext) -> (session :Capability);
  # Opens a session for `caller`. The session's interface is the one the
  # blueprint's manifest names (for example `Counter` in examples/counter);
  # clients cast it to their generated type or drive it dynamically with
  # `Gadget.schema()`.
  #
  # `context` is this one session's way back to the platform. Keep it (add
  # a reference) for as long as the session lives and release it when the
  # session ends. When the host reopens a session on a fresh instance (the
  # old one was evicted or crashed), it calls open again with the same
  # caller and the same context.
}

interface SessionContext {
  # The platform's side of one session, lent to the guest by Guest.open
  # (Sandstorm's SessionContext is the model). It is guarded like the
  # session itself: once the token the session was opened with is revoked
  # or expires, every call fails with a disconnected exception. The host
  # lets go of its references when the session is released; release yours
  # then too. Bindings, approvals and sharing will add methods.

  caller @0 () -> (caller :Caller);
  # Who the session belongs to, checked now rather than remembered from
  # open: the same Caller open received while the session's credential is
  # valid and the caller may still use the gadget; an error once that is no
  # longer so (disconnected for a revoked or expired token). A guest that
  # keeps a long-lived session (or acts on a user's behalf later) asks
  # before it trusts the caller again.

  present @1 () -> (present :List(Caller));
  # Who has a session open on this gadget now, the session's own caller
  # included: one entry per user (their highest role among their
  # sessions), ordered by when that user's oldest open session began, each
  # as this gadget knows them (Caller.userId is the same pseudonym that
  # user's own sessions see). Guarded as `caller` is.
}

interface Host {
  # What the host lends to a guest (host import index 0 in every instance).

  storage @0 () -> (storage :Storage);
  # The gadget's private, durable key-value store. See Storage for limits and
  # transaction semantics. The capability stays valid for the life of the
  # instance: keep it rather than asking again (the Go SDK's guest.Storage
  # does), which saves a round trip across the sandbox boundary per use.

  log @1 (level :LogLevel, text :Text);
  # Appends a line to the gadget's log, which its owner reads with
  # `Gadget.logs()`. Long messages are truncated; a flood is rate limited.

  gatekeeper @2 (name :Text) -> (gatekeeper :Gatekeeper.Gatekeeper);
  # The gatekeeper bound to this gadget under `name` (`Gadget.bind`): its
  # only way out of the sandbox. Its interface is its kind's, which extends
  # Gatekeeper. Every call is written to the owner's audit log, and an
  # action is answered with a simulated result and waits for the owner's
  # approval. A name that is not bound fails with "no such binding",
  # whether it never was or was unbound; after `unbind` every reference
  # fails, also one the gadget kept.
}

enum LogLevel {
  debug @0;
  info @1;
  warn @2;
  error @3;
}

interface Storage {
  # A gadget's private, transactional key-value store.
  #
  # Transactions: every write a guest makes while handling one call (the call
  # the host delivered into the sandbox, plus everything nested in it) is
  # buffered and committed atomically when that call returns successfully. If
  # the call fails, traps, runs out of time or memory, the writes are
  # discarded: storage is never half-applied. Reads see the call's own
  # buffered writes.
  #
  # Limits (defaults; `gadgetd serve --config` sets them under [storage]):
  # keys up to 512 bytes, values up to 1 MiB, 64 MiB in total per gadget. A
  # write past a limit fails with an error naming the limit, and the rest of
  # the transaction is kept.

  get @0 (key :Text) -> (value :Data, found :Bool);
  # Reads one key. `found` is false when the key does not exist.

  put @1 (key :Text, value :Data);
  # Writes one key.

  delete @2 (key :Text);
  # Removes one key. Removing a missing key is not an error.

  list @3 (prefix :Text, limit :UInt32, after :Text) -> (entries :List(Entry));
  # Lists keys that start with `prefix`, in byte order, starting strictly
  # after `after` (empty: from the beginning). At most `limit` entries
  # (0 means the default of 1000, which is also the maximum).

  struct Entry {
    key @0 :Text;
    value @1 :Data;
  }
}

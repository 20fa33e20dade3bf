# The session of the delegate test guest (server/internal/testguests/delegate):
# a gadget that hands out its Storage, uses a Storage it is handed, asks the
# contexts of all its sessions who is present, and tries to keep, as a
# lasting credential, a capability it is handed.

@0x894307343cbc1002;

using Go = import "/go.capnp";
$Go.package("delegatepb");
$Go.import("github.com/gadgetd/gadgetd/server/internal/testguests/delegate/delegatepb");

interface Delegate {
  storage @0 () -> (storage :Capability);
  # The gadget's own Storage (Host.storage), delegated to the caller.

  writeThenFail @1 (key :Text, value :Data, until :Text, ms :UInt32) -> ();
  # Puts key = value through the gadget's own Storage, logs "written", then
  # reads key `until` every 5 ms until it exists (for at most ms), and fails
  # on purpose: the call's write must be discarded with it.

  use @2 (storage :Capability, get :Text, putKey :Text, putValue :Data) -> (value :Data, found :Bool);
  # Through the Storage it is handed, not its own: reads key `get`, then
  # puts putKey = putValue, and answers what it read.

  present @3 () -> (answers :List(Text));
  # For every session open on this instance, in no set order: what its own
  # SessionContext.present answers, as "userName:role" comma-separated, or
  # "disconnected" when it fails so, or "error: " and the error. So one
  # session's call tells what a guest that keeps every context would learn
  # from each.

  save @4 (cap :Capability) -> (token :Text);
  # Calls Persistent.save on the capability it is handed (a session or
  # Gadget of another gadget, say) and answers the token, or fails with
  # save's error: what a hostile guest would keep for its author.

  mint @5 (gadget :Capability, how :Text) -> (credential :Text);
  # Tries to turn the Gadget capability it is handed into a credential its
  # author could use later: how is "frameTicket" (a ticket), "createLink"
  # (a viewer link's secret) or "share" (a viewer share with user "carol",
  # answered as "shared"). Answers what it got, or fails with the error.
}

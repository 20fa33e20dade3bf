# The client-facing API of gadgetd.
#
# A Cap'n Proto connection (TCP, or TLS over TCP; a websocket transport for
# browsers is planned) bootstraps a Gateway. Nothing else is reachable
# without a token: `Gateway.login(token)` returns the caller's private
# Workspace, and everything else hangs off that. All calls can be
# promise-pipelined, so a client can write
#
#     gateway.login(t).workspace.create("counter").gadget.open().session.increment()
#
# and pay one network round trip.
#
# Errors are ordinary Cap'n Proto exceptions whose reason names what was wrong
# ("unknown gadget id ...", "blueprint ... has no export ...").

@0xd3b1c9b1418c1831;

using Go = import "/go.capnp";
$Go.package("schema");
$Go.import("github.com/gadgetd/gadgetd/schema");

using Gadgets = import "gadget.capnp";
using Persistent = import "/capnp/persistent.capnp";

interface Gateway {
  # The bootstrap capability of every connection.

  login @0 (token :Text) -> (workspace :Workspace, user :UserInfo);
  # Exchanges a user token (printed by `gadgetd user add NAME`) for that
  # user's workspace. A wrong token fails with "invalid token" and reveals
  # nothing about which users exist.

  restore @1 (token :Text) -> (cap :Capability);
  # Turns a token from `save` (Persistent.save on a Gadget, or on a
  # session that `Gadget.open` returned) back into that capability, for
  # whoever saved it, at no more than their role when they saved it and no
  # more than they hold now: a Gadget capability, or a fresh session on
  # the same gadget. No login is needed: the token is the credential, a
  # bearer secret (`gds_...`) the server keeps only as a keyed hash. It
  # dies when its saver loses access to the gadget (the share or link
  # grant their role came through when saving revoked, even if they hold
  # the gadget another way; the gadget removed), or drops it
  # (`Workspace.dropSaved`); revoking the login token it was saved with
  # does not end it. The connection counts as the saver's from then on.
  # A token that is wrong, dropped or dead fails with the same "invalid
  # token", whichever it is.
}

struct UserInfo {
  id @0 :Text;
  # Stable, opaque user id.

  name @1 :Text;
  # Login name.
}

interface Workspace {
  # One user's private workspace: their blueprints, their gadgets and the
  # gadgets shared with them. A workspace never shows another user's gadget
  # that is not shared with this user; naming its id gives the same "unknown
  # gadget" error as an id that never existed.

  blueprints @0 () -> (blueprints :List(BlueprintInfo));
  # The blueprints that can be instantiated: those shipped with the server
  # and those this user installed, newest version of each name.

  installBlueprint @1 (bundle :Blueprint) -> (info :BlueprintInfo);
  # Validates and installs a blueprint for this user. The wasm must compile
  # and export the guest ABI (docs/ABI.md), the manifest's session interface
  # must exist in the bundled schema, and the version must be new for this
  # name. Otherwise it fails with an error that names the problem. The bundle
  # must fit in one message (the connection's message limit, 9 MiB by
  # default); `uploadBlueprint` takes a bundle of any allowed size.

  create @2 (blueprint :Text, name :Text) -> (gadget :Gadget, info :GadgetInfo);
  # Creates a new gadget from the newest version of the named blueprint. The
  # caller becomes its owner. `name` is a label for humans; empty means the
  # blueprint's name.

  gadgets @3 (after :Text, limit :UInt32) -> (gadgets :List(ListedGadget), next :Text);
  # The gadgets this user can reach (their own and those shared with them,
  # `GadgetInfo.sharedBy` tells which), oldest first, a page at a time, each
  # with its Gadget capability: the listing is the authority, no id needs
  # looking up again. Release what you do not keep: each counts against your
  # connection's bound on capabilities held.
  #
  # A page holds at most `limit` gadgets (0 means 100; more than 1000 is
  # refused). `after` is empty for the first page and the previous page's
  # `next` for each later one; `next` is empty on the last page. A cursor is
  # an opaque position in the order (creation time, then id) and stays valid
  # when gadgets come and go between pages: those removed are skipped, and
  # those that became reachable since appear if they sort after it. A gadget
  # created since does, unless created in the very millisecond of the
  # cursor's own; one shared with you since sorts by when it was created,
  # and may not. List from the start again to be sure of everything.

  open @4 (id :Text) -> (gadget :Gadget);
  # The gadget with this id, attenuated to the caller's role.

  obsoleteRemove @5 (id :Text);
  # Reserved: was `remove(id)`, now `Gadget.remove()` (the authority to
  # delete a gadget lives on the owner's capability to it, not on the
  # workspace). Fails with "unimplemented". Cap'n Proto ordinals cannot have
  # holes and must not be reused, so this ordinal stays, unused.

  tokens @6 () -> (tokens :List(TokenInfo));
  # This user's login tokens, oldest first: their public ids and labels,
  # never the secrets (the server keeps only hashes).

  newToken @7 (label :Text, validForSeconds :UInt64) -> (token :Text, info :TokenInfo);
  # Issues another login token for this user. `label` (at most 200 bytes)
  # says where it will be used; `validForSeconds` 0 means it never expires.
  # The secret is in `token` and nowhere else: it cannot be shown again.
  # A user may hold a bounded number of tokens; past it this fails until one
  # is revoked.

  revokeToken @8 (id :Text);
  # Revokes one of this user's tokens by its id. It no longer logs in, and
  # every Workspace and Gadget capability obtained with it, and every session
  # opened through them, fails from its next call with "the token this
  # capability was obtained with was revoked" (a disconnected exception).
  # Revoking the token this workspace came from is allowed and ends it. An id
  # that is not one of this user's tokens fails with "unknown token id",
  # whoever else's it may be.

  uploadBlueprint @9 (size :UInt64) -> (upload :BlueprintUpload);
  # Starts installing a blueprint bundle of exactly `size` bytes, streamed
  # in chunks rather than sent in one message: write a `Blueprint` struct,
  # serialized as a Cap'n Proto message in the standard (unpacked) stream
  # framing, to `upload`, then call `finish`, which installs it exactly as
  # `installBlueprint` would. `size` is bounded by the server's blueprint
  # limits; a user may have only a few uploads open at once.

  services @10 () -> (services :List(ServiceInfo));
  # The services the operator configured, which a gadget of this user can
  # be bound to (`Gadget.bind`). Their secrets stay in the server.

  gatekeeperSchema @11 (kind :Text) -> (nodes :Data, interfaceId :UInt64, source :Text);
  # The schema of one kind of gatekeeper ("http", "github"), as
  # `Gadget.schema()` gives a blueprint's: its compiled nodes, its
  # interface (which extends `Gatekeeper`), and its `.capnp` source, for
  # blueprint authors.

  actions @12 (filter :ActionFilter) -> (actions :List(ActionInfo));
  # The actions the gadgets of this workspace queued, oldest first: side
  # effects a gatekeeper holds until this user approves them.

  decide @13 (ids :List(Text), approve :Bool) -> (decisions :List(Decision));
  # Approves or rejects the actions with these ids, each on its own: one
  # that cannot be decided (unknown, already decided) says why in its
  # Decision and does not stop the others. An approved action is applied
  # in its binding's queue order, exactly once; a rejected one is dropped,
  # and the simulated change it made disappears from the gadget's reads.
  # Retrying (approve) or dropping (reject) an action left in doubt by a
  # crash is a decision too.

  audit @14 (filter :AuditFilter) -> (entries :List(AuditEntry));
  # The audit log: every call the gadgets of this workspace made on a
  # gatekeeper, and every decision and outcome of an action, newest first.
  # It keeps a bounded number of entries; the oldest go first.

  watchActions @15 (listener :ActionListener) -> (subscription :Subscription);
  # Calls listener with every action of this workspace that is queued or
  # changes state, from now on, until the subscription is released.

  redeem @16 (secret :Text) -> (gadget :Gadget, info :GadgetInfo, redeemed :Bool);
  # Redeems a share link's secret (`Gadget.createLink`): the gadget joins
  # this workspace at the link's role (less if its creator now holds less),
  # and stays until the link, or a share above it, is revoked. If you
  # already hold the gadget at that role or better (your own link, say),
  # nothing changes, a single-use link is not consumed, and `redeemed` is
  # false. A secret that is wrong, expired, revoked or already used fails
  # with the same "invalid or expired link", whichever it is.

  saved @17 () -> (saved :List(SavedInfo));
  # The tokens this user saved (Persistent.save), oldest first, never the
  # secrets.

  dropSaved @18 (id :Text);
  # Drops one of this user's saved tokens by its id: it restores nothing
  # from then on, and capabilities restored from it fail from their next
  # call. An id that is not one of this user's saved tokens fails with
  # "unknown saved token id".
}

struct SavedInfo {
  # One token a user saved, without its secret.

  id @0 :Text;
  # Public handle, for dropSaved.

  gadget @1 :Text;
  # The gadget's id.

  kind @2 :SavedKind;
  role @3 :Gadgets.Role;
  # The saver's role when it was saved: the most it restores.

  createdAt @4 :Int64;
  # Unix time in milliseconds.
}

enum SavedKind {
  gadget @0;
  # Restores a Gadget capability.
  session @1;
  # Restores a fresh session, as Gadget.open opens one.
}

struct ServiceInfo {
  name @0 :Text;
  kind @1 :Text;
  description @2 :Text;
  actions @3 :List(Text);
  # The methods of its kind that are actions, for `Gadget.setAutoApprove`.
}

struct BindingInfo {
  name @0 :Text;
  # What the gadget asks `Host.gatekeeper` for.
  service @1 :Text;
  kind @2 :Text;
  resource @3 :Text;
  # The one resource it grants: "owner/repo", a URL prefix.
  createdBy @4 :Text;
  createdAt @5 :Int64;
  # Unix milliseconds.
  autoApprove @6 :List(Text);
  # Its action methods that are approved as they are queued.
}

enum ActionState {
  pending @0;
  # Waits for a decision.
  approved @1;
  # Waits for its turn to apply.
  applying @2;
  applied @3;
  failed @4;
  # Its real call failed: see outcome.
  rejected @5;
  inDoubt @6;
  # Its real call had begun when the server stopped, and nothing can tell
  # whether it took effect: approve retries it, reject drops it.
}

struct ActionInfo {
  id @0 :Text;
  seq @1 :UInt64;
  gadget @2 :Text;
  binding @3 :Text;
  kind @4 :Text;
  method @5 :Text;
  user @6 :Text;
  state @7 :ActionState;
  description @8 :Text;
  createdAt @9 :Int64;
  decidedBy @10 :Text;
  decidedAt @11 :Int64;
  doneAt @12 :Int64;
  outcome @13 :Text;
  # What applying it did, or why it failed.
  details @14 :Text;
  # Everything it will do, as its kind renders it for the human deciding:
  # the whole text of an issue or a comment, the request a POST will send.
  # Read it before approving: the description is one line.
  userName @15 :Text;
  # The login name of `user`, whose session queued it.
}

struct ActionFilter {
  states @0 :List(ActionState);
  # Empty: every state.
  gadget @1 :Text;
  afterSeq @2 :UInt64;
  limit @3 :UInt32;
  # 0: the server's default.
}

struct Decision {
  id @0 :Text;
  ok @1 :Bool;
  reason @2 :Text;
  # Why not, when not ok.
  action @3 :ActionInfo;
}

struct AuditFilter {
  gadget @0 :Text;
  beforeSeq @1 :UInt64;
  # 0: from the newest.
  limit @2 :UInt32;
}

struct AuditEntry {
  seq @0 :UInt64;
  time @1 :Int64;
  gadget @2 :Text;
  user @3 :Text;
  binding @4 :Text;
  kind @5 :Text;
  method @6 :Text;
  action @7 :Bool;
  # An action (a side effect) rather than an observation (a read).
  description @8 :Text;
  outcome @9 :Text;
  failed @10 :Bool;
  actionId @11 :Text;
  userName @12 :Text;
  # The login name of `user`, whose session made the call (a user the
  # gadget was shared with, or its owner).
}

interface ActionListener {
  changed @0 (action :ActionInfo);
  missed @1 ();
  # Changes were dropped because the listener fell behind: list them again.
}

interface Subscription {
  # Releasing it ends what it subscribed to.
}

interface BlueprintUpload {
  # One blueprint bundle on its way in (Workspace.uploadBlueprint). Dropping
  # it before `finish` abandons the upload and frees what was written.

  write @0 (chunk :Data) -> stream;
  # Appends `chunk` (at most 64 KiB). Writing past the size given to
  # uploadBlueprint fails, and so does every call after it.

  finish @1 () -> (info :BlueprintInfo);
  # Checks that exactly the announced size was written, then validates and
  # installs the bundle.
}

struct TokenInfo {
  id @0 :Text;
  # Short public handle, for revokeToken.

  label @1 :Text;

  createdAt @2 :Int64;
  # Unix time in milliseconds.

  expiresAt @3 :Int64;
  # Unix time in milliseconds; 0 for a token that never expires.

  current @4 :Bool;
  # True for the token this workspace was obtained with.
}

interface Gadget extends(Persistent.Persistent(Text, Text)) {
  # One gadget, as seen by one user. The user's role is recomputed on every
  # call (a share revoked or lowered since counts at once), and never
  # exceeds the role the capability was obtained with.
  #
  # `save` (from Persistent, with `sealFor` null) returns a token
  # (`sturdyRef`) that `Gateway.restore` turns back into this capability;
  # a session `open` returns answers `save` the same way (the host answers,
  # never the gadget), its token restoring a fresh session. Sealing for an
  # owner is not supported. Not saved: a capability restored from a token
  # (keep that token), a frame's session, and anything a gadget's guest
  # asks to save. A guest is refused `frameTicket`, `share` and
  # `createLink` too: none of the four may turn a capability a client
  # handed a gadget into a credential its author could use later.

  info @0 () -> (info :GadgetInfo);

  open @1 () -> (session :Capability);
  # Opens a session: the capability the gadget's guest returned from
  # `Guest.open(caller, context)`. Its interface is the blueprint's session
  # interface (`info.sessionInterface`).

  ui @2 () -> (html :Text);
  # The gadget's UI: one HTML document with its scripts inline, meant for a
  # sandboxed iframe.

  schema @3 () -> (nodes :Data, sessionInterface :UInt64);
  # The blueprint's compiled schema, as a serialized
  # `capnp.schema.CodeGeneratorRequest`, so that clients without generated
  # code can call the session dynamically.

  logs @4 (limit :UInt32) -> (lines :List(LogLine));
  # The newest lines the guest wrote with `Host.log`, oldest first. Editor or
  # owner only.

  remove @5 ();
  # Deletes the gadget, its storage and its shares. Its creator only: any
  # other role fails with "removing gadget ... needs the owner role", and a
  # user it was shared with as owner with "... only its creator may". A call
  # the gadget is running fails. Every outstanding capability to it, and
  # every session opened from it, fails from then on.

  frameTicket @6 () -> (ticket :Text, expiresAt :Int64);
  # A ticket for one websocket to this gadget's session, for the browser
  # shell to hand its sandboxed frame: `/ws/frame?ticket=...` on the HTTP
  # listener bootstraps straight to a session opened as `open()` opens one,
  # for this user with this role, and reaches nothing else. It is
  # single-use, expires at `expiresAt` (Unix milliseconds; a minute by
  # default), lives in the server's memory only, and is refused once the
  # token this capability was obtained with is revoked or the gadget is
  # removed; revoking that token later cuts the frame's session off too.
  # A user holds a bounded number of unused tickets at once.

  bind @7 (name :Text, service :Text, resource :Text) -> (binding :BindingInfo);
  # Binds a gatekeeper to this gadget under `name`: one resource (`resource`:
  # a repository "owner/repo", a URL prefix) of one configured service
  # (`Workspace.services`). Inside its sandbox the gadget reaches it by
  # name, with `Host.gatekeeper`. Its creator only: a gatekeeper acts with
  # the creator's authority, and its actions wait for the creator.

  unbind @8 (name :Text);
  # Removes a binding. Every reference the gadget holds to it, also one it
  # stored, fails from then on; its actions not yet applied are rejected.
  # Its creator only.

  bindings @9 () -> (bindings :List(BindingInfo));

  setAutoApprove @10 (binding :Text, method :Text, on :Bool);
  # Approves, as they are queued, the actions of one method of one binding
  # (`on`), or stops doing so. Its creator only.

  share @11 (user :Text, role :Gadgets.Role) -> (share :ShareInfo);
  # Shares this gadget with the user whose login name is `user`, at `role`:
  # it appears in their workspace (`Workspace.gadgets`, `Workspace.open`).
  # You may share at most at your own role, and a viewer may not share at
  # all. The share hangs below yours: it ends when yours does, and gives no
  # more than yours does now. Sharing again with a user you shared with
  # replaces the role. Sharing with yourself, with the owner or with a user
  # who does not exist fails with an error that says so.

  unshare @12 (user :Text) -> (revoked :UInt32);
  # Revokes the shares you made to `user` or, if you are an owner, every
  # share `user` holds on this gadget; each with every share made on the
  # strength of it (you shared with B and B with C: revoking B's ends C's).
  # The capabilities those users hold to the gadget, their open sessions
  # and those sessions' contexts fail from their next call, disconnected.
  # `revoked` counts the shares ended, those below included. Fails if
  # `user` holds no share of it you may revoke.

  shares @13 () -> (shares :List(ShareInfo));
  # Who holds a share of this gadget, from whom, oldest first. Editor or
  # owner only.

  createLink @14 (role :Gadgets.Role, expiresInSeconds :UInt64, expiresAt :Int64, singleUse :Bool, label :Text) -> (secret :Text, link :LinkInfo);
  # Creates a share link: whoever redeems `secret` (`Workspace.redeem`)
  # finds the gadget in their workspace at `role`. The secret is in
  # `secret` and nowhere else (the server keeps a keyed hash): it cannot be
  # shown again. Like a share, a link is at most your own role, a viewer
  # may not create one, and it hangs below your share: the redemptions are
  # worth no more than you hold now, and end when yours does. It expires
  # `expiresInSeconds` from now or at `expiresAt` (Unix milliseconds), at
  # most one of them set; 0 for both: never. Expiry ends redeeming, not
  # what was redeemed. A `singleUse` link is consumed by its first
  # redemption. `label` (at most 200 bytes) is for humans. A gadget, and
  # a user, may have a bounded number of live (redeemable) links.

  links @15 () -> (links :List(LinkInfo));
  # The links of this gadget, oldest first: an owner sees all, an editor
  # those they created. Never the secrets.

  revokeLink @16 (id :Text) -> (revoked :UInt32);
  # Revokes a link you created (an owner: any link of this gadget). It can
  # no longer be redeemed, and every redemption of it ends, with every share
  # made on the strength of one, as `unshare` ends a share. `revoked`
  # counts the redemptions and shares ended.
}

struct LinkInfo {
  # One share link of a gadget, without its secret.

  id @0 :Text;
  # Public handle, for revokeLink.

  role @1 :Gadgets.Role;
  createdBy @2 :Text;
  # The creator's login name.

  createdAt @3 :Int64;
  expiresAt @4 :Int64;
  # Unix time in milliseconds; 0: never expires.

  singleUse @5 :Bool;
  consumed @6 :Bool;
  # A single-use link that was redeemed.

  label @7 :Text;
  redemptions @8 :UInt32;
  # How many users hold the gadget through it now.
}

struct ShareInfo {
  # One share of a gadget: `user` holds `role` because `sharedBy` shared it.

  user @0 :Text;
  # The holder's login name.

  role @1 :Gadgets.Role;
  # The role shared. The holder's role is the least along the shares from
  # the owner to them, so it is less than this if a share above gives less.

  sharedBy @2 :Text;
  # The sharer's login name.

  createdAt @3 :Int64;
  # Unix time in milliseconds of the first share from this sharer to this
  # user (sharing again changes the role, not this).
}

struct ListedGadget {
  # One entry of Workspace.gadgets().

  gadget @0 :Gadget;
  # The gadget, at the role this user has, obtained with the same token as
  # the workspace: revoking the token cuts it off, as it does the workspace.

  info @1 :GadgetInfo;
}

struct GadgetInfo {
  id @0 :Text;
  # Unguessable id, stable for the gadget's life.

  name @1 :Text;
  blueprint @2 :Text;
  # Name of the blueprint it runs.

  blueprintVersion @3 :Text;
  # The version it was created from.

  sessionInterface @4 :UInt64;
  # Interface id of the session capability `open()` returns.

  role @5 :Gadgets.Role;
  # The caller's role.

  owner @6 :Text;
  # Owner's user name.

  createdAt @7 :Int64;
  # Unix time in milliseconds.

  sharedBy @8 :Text;
  # For a gadget shared with the caller: the login name of who shared it
  # (of the share the caller's role comes through). Empty for their own.
  permissions @9 :List(PermissionDef);
  roles @10 :List(RoleDef);
  # What the gadget's own blueprint version declares (Blueprint.permissions
  # and .roles), so whoever shares it can say what each role may do. In
  # the answers about one gadget (Gadget.info, Workspace.create and
  # .redeem); empty in Workspace.gadgets, whose answer stays small however
  # many gadgets others share with a user.
}

struct LogLine {
  time @0 :Int64;
  # Unix time in milliseconds.

  level @1 :Gadgets.LogLevel;
  text @2 :Text;
}

struct BlueprintInfo {
  name @0 :Text;
  version @1 :Text;
  description @2 :Text;
  sessionInterface @3 :UInt64;
  builtin @4 :Bool;
  # True for blueprints that ship with the server.
  bindings @5 :List(BindingRequest);
  # The gatekeepers its gadgets ask to be bound to.

  permissions @6 :List(PermissionDef);
  roles @7 :List(RoleDef);
  # As the blueprint declares them (Blueprint.permissions and .roles), so
  # a user sharing a gadget can say what each role may do.
}

struct BindingRequest {
  # A binding a blueprint asks for (blueprint.json's "bindings"): nothing
  # is bound until a user binds it (`Gadget.bind`), to a resource they
  # choose.
  name @0 :Text;
  # The name the gadget asks `Host.gatekeeper` for.
  kind @1 :Text;
  # The kind of gatekeeper: "github", "http".
  why @2 :Text;
  # What the gadget does with it, for the user deciding.
}

struct Blueprint {
  # A blueprint bundle: the code of an app. `gadgetd blueprint install DIR`
  # builds one from a directory (see examples/counter).

  name @0 :Text;
  # Lower-case letters, digits and dashes; 1 to 64 characters.

  version @1 :Text;
  description @2 :Text;

  sessionInterface @3 :UInt64;
  # Id of the interface `Guest.open` returns; must be an interface in
  # `schemaNodes`.

  wasm @4 :Data;
  # The guest, a wasip1 reactor module exporting the ABI in docs/ABI.md.

  ui @5 :Text;
  # One HTML document, scripts inline.

  schemaSource @6 :Text;
  # The .capnp source of the session interface, for humans.

  schemaNodes @7 :Data;
  # The compiled schema: a serialized capnp.schema.CodeGeneratorRequest
  # (`capnp compile -o- file.capnp`).

  bindings @8 :List(BindingRequest);
  # The bindings its gadgets ask for.

  permissions @9 :List(PermissionDef);
  # The blueprint's own permissions (blueprint.json's "permissions"), which
  # the guest checks in `Caller.permissions`. At most 32.

  roles @10 :List(RoleDef);
  # Which of `permissions` the viewer and editor roles bundle
  # (blueprint.json's "roles"). An owner holds them all; a role holds what
  # the roles below it hold.
}

struct PermissionDef {
  # One permission a blueprint defines for itself (Sandstorm's
  # PermissionDef).

  name @0 :Text;
  # What the guest checks: 1 to 32 lower-case letters, digits and dashes,
  # starting with a letter.

  title @1 :Text;
  description @2 :Text;
  # For the people who share the gadget.
}

struct RoleDef {
  role @0 :Gadgets.Role;
  # viewer or editor.

  permissions @1 :List(Text);
  # Names from Blueprint.permissions.
}

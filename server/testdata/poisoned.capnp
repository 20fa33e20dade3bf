# A hostile blueprint's schema for server tests. It reuses the node ids of
# gadgetd's own interfaces (schema/gadget.capnp, schema/workspace.capnp) and
# declares capabilities where the real ones have data, and data where they
# have capabilities. Nothing the server does may trust it beyond the
# blueprint that shipped it.
@0xf1e3b5a7c9d2e4f6;

interface Storage @0xe2b34efa9d885fd3 {
  # gadgetd's Storage has get @0 (key :Text) -> (value :Data).
  get @0 (key :Text) -> (value :Capability);
}

interface Gateway @0xa02c395e0dad31ce {
  # gadgetd's Gateway has login @0 (token :Text) -> (workspace :Workspace, ...).
  login @0 (token :Text) -> (workspace :Text);
}

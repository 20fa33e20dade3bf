# Gatekeepers: the only way a gadget reaches anything outside its sandbox.
#
# A gatekeeper is created per (gadget, binding name, resource) and knows who
# calls it. It narrows access to one resource, logs every call in the audit
# log, and holds side effects ("actions") for a human to approve. Each kind
# (http, github, ...) extends Gatekeeper with its own methods in its own
# schema file.

@0x8cfacb334bab4fca;

using Go = import "/go.capnp";
$Go.package("schema");
$Go.import("github.com/gadgetd/gadgetd/schema");

interface Gatekeeper {
  # The base interface every gatekeeper implements.

  describe @0 () -> (description :Description);
  # What this gatekeeper is and what it grants.

  struct Description {
    kind @0 :Text;
    # The gatekeeper kind, for example "http" or "github".

    resource @1 :Text;
    # The one resource it grants access to, for example a URL prefix or an
    # "owner/repo" name.

    bindingName @2 :Text;
    # The name the gadget knows it by.
  }
}

# The frames that cross the boundary between the gadgetd host and a WebAssembly
# guest. docs/ABI.md specifies how they travel (exports, imports, memory).
#
# The host is the only Cap'n Proto RPC endpoint. The guest never speaks the RPC
# protocol: it exchanges these frames, each one a standard Cap'n Proto message
# (stream framing: segment table, then segments) whose root is a Frame.

@0xca26524525e1a736;

using Go = import "/go.capnp";
$Go.package("abi");
$Go.import("github.com/gadgetd/gadgetd/schema/abi");

struct Frame {
  union {
    call @0 :Call;
    # A method call: host to guest (delivered into the guest) or guest to host
    # (the guest calling a capability it holds).

    return @1 :Payload;
    # The successful answer to the innermost call in progress.

    exception :group {
      # The failed answer to the innermost call in progress.

      reason @2 :Text;
      # Why, for people: the error's text.

      type @4 :ExceptionType;
      # What kind of failure, for programs: it reaches the client as the
      # Cap'n Proto exception's type. A sender that sets no type (a guest
      # written before the field existed) means `failed`.
    }

    release @3 :UInt32;
    # Host to guest only: the host dropped its reference to the guest export
    # with this index. (A guest drops a host import with the `release`
    # import function instead; a release frame sent to the host is an ABI
    # violation.)
  }
}

enum ExceptionType {
  # The kinds of failure, as in Cap'n Proto's rpc.capnp Exception.Type (same
  # numbers), so a type crosses the boundary and the network unchanged.

  failed @0;
  # Something went wrong; retrying as is will most likely fail again.

  overloaded @1;
  # A resource ran short (a full queue, say); retrying later may work.

  disconnected @2;
  # The capability is gone (its gadget closed, restarted or was removed,
  # the server is shutting down, or it was revoked); get a new one.

  unimplemented @3;
  # The target does not implement this interface or method.
}

struct Call {
  target @0 :UInt32;
  # Host to guest: a guest export index (0 is the Guest main object).
  # Guest to host: a host import index (0 is the Host).

  interfaceId @1 :UInt64;
  methodId @2 :UInt16;
  params @3 :Payload;
}

struct Payload {
  content @0 :AnyPointer;
  # The params or results struct. Capability pointers in it index capTable.

  capTable @1 :List(CapDescriptor);
}

struct CapDescriptor {
  # Names one capability in a payload. Indices are per instance and never
  # reused: a stale or unknown index is an error, never another object.

  union {
    none @0 :Void;
    # A null capability.

    guest @1 :UInt32;
    # An object the guest exports, by guest export index.

    host @2 :UInt32;
    # An object the host lent the guest, by host import index.
  }
}

// Capabilities as the generated bindings leave them awkward: releasing them
// (a pipelined stub's close() throws "not implemented", and a results
// struct's capabilities are released only when the garbage collector finds
// them), and reading an untyped `:Capability` field (Gadget.open's session)
// as a typed stub, pipelined or not.

import { Struct, clientFromResolution, utils } from "capnp-es";

// capability returns the capability in pointer field index of x as a stub of
// Interface (a generated interface class, or its Client class). x is a
// results struct, or the results promise of a call not yet returned, in
// which case calls on the stub are pipelined.
export function capability(x, index, Interface) {
  const Client = Interface.Client ?? Interface;
  if (x.pipeline) {
    return new Client(x.pipeline.getPipeline(Struct, index).client());
  }
  return new Client(utils.getInterfaceClientOrNullAt(index, x));
}

// release lets go of x: a stub (anything with .client), a bare capnp-es
// client, or a results struct, whose every capability is released.
export async function release(x) {
  if (x == null) {
    return;
  }
  const capTable = x.segment?.message?._capnp?.capTable;
  if (capTable) {
    for (const [i, c] of capTable.entries()) {
      capTable[i] = null;
      c?.close();
    }
    return;
  }
  const client = x.client ?? x;
  const pipeline = client.pipeline;
  if (!pipeline) {
    client.close();
    return;
  }
  // A promised capability: release what it resolves to, if anything.
  let results;
  try {
    results = await pipeline.answer.struct();
  } catch {
    return; // the call failed: there is nothing to release
  }
  clientFromResolution(pipeline.transform(), results)?.close();
}

// A JS peer for peer_test.go: connects to a go-capnp peer at ADDR, serves a
// Guest (gadget.capnp) as its bootstrap, and plays one SCENARIO with a Conn
// built from every fix (VARIANT "all") or every fix but one
// ("without:NAME"). The Go side drives the scenario and judges it.
//
//   node test/peer.mjs ADDR SCENARIO VARIANT
//
// Scenarios:
//   disembargo  Guest.open returns the context the Go side passed in (so a
//               capability of the Go side's own), but only once the Go side's
//               call pipelined onto that answer has arrived.
//   resolve     Guest.open gets its context as a promise. It asks the Go
//               side's bootstrap (a SessionContext) to resolve it, waits for
//               the Resolve, calls through the context, and releases it.

import { utils } from "capnp-es";
import { connClass, fixes } from "../src/conn.js";
import { release } from "../src/caps.js";
import { Guest, SessionContext } from "../src/schema/gadget.js";
import { tap } from "./helpers.mjs";
import { dialTCP } from "./tcp.mjs";

const [addr, scenario, variant] = process.argv.slice(2);
const names = variant === "all" ? Object.keys(fixes) : Object.keys(fixes).filter((n) => `without:${n}` !== variant);
if (names.length === Object.keys(fixes).length && variant !== "all") {
  throw new Error(`unknown variant ${variant}`);
}

const transport = await dialTCP(addr);
const messages = tap(transport);
const conn = new (connClass(names))(transport);
conn.onError = (err) => console.error("peer: connection failed:", err);

// until polls cond every few milliseconds.
async function until(cond) {
  while (!cond()) {
    await new Promise((r) => setTimeout(r, 5));
  }
}

const guests = {
  async disembargo(params, results) {
    await until(() => Object.values(conn.answers).some((a) => a.queue.length > 0));
    utils.setInterfacePointer(results.segment.message.addCap(params.context.client), utils.getPointer(0, results));
  },
  async resolve(params) {
    const context = params.context;
    await conn.bootstrap(SessionContext).caller().promise();
    await messages.until("recv RESOLVE");
    await context.caller().promise();
    await release(params);
  },
};
if (!guests[scenario]) {
  throw new Error(`unknown scenario ${scenario}`);
}
conn.initMain(Guest, { open: guests[scenario] });
await transport.ended;

// Helpers shared by the node tests.

import { Message as RpcMessage } from "capnp-es/capnp/rpc";
import { Connection } from "../src/gadgetd.js";
import { GadgetConn } from "../src/conn.js";
import { webSocketTransport } from "../src/transport.js";
import { dialTCP } from "./tcp.mjs";

// messageNames maps an RPC message's which() to its name.
const messageNames = Object.fromEntries(
  Object.entries(RpcMessage)
    .filter(([k, v]) => /^[A-Z_]+$/.test(k) && typeof v === "number")
    .map(([k, v]) => [v, k]),
);

// tap records the kind of every message transport sends and receives, in
// order ("send CALL", "recv RETURN"), and lets a test wait for one.
export function tap(transport) {
  const log = [];
  const waiters = new Set(); // {check, resolve}
  const count = (entry) => log.filter((e) => e === entry).length;
  const note = (entry) => {
    log.push(entry);
    for (const w of [...waiters]) {
      if (w.check()) {
        waiters.delete(w);
        w.resolve();
      }
    }
  };
  const send = transport.sendMessage.bind(transport);
  transport.sendMessage = (m) => {
    note(`send ${messageNames[m.which()]}`);
    send(m);
  };
  const recv = transport.recvMessage.bind(transport);
  transport.recvMessage = async () => {
    const m = await recv();
    note(`recv ${messageNames[m.which()]}`);
    return m;
  };
  return {
    log,
    count,
    // until resolves once entry has been logged n times in all.
    until(entry, n = 1) {
      const check = () => count(entry) >= n;
      if (check()) {
        return Promise.resolve();
      }
      return new Promise((resolve) => waiters.add({ check, resolve }));
    },
  };
}

// dial connects to the gadgetd under test: over /ws when GADGETD_WS_URL is
// set, else over TCP (GADGETD_CAPNP_ADDR). It returns the Connection and a
// tap on its transport. Conn is the connection class (GadgetConn unless a
// test wants capnp-es's own, or one with a fix left out).
export async function dial(Conn = GadgetConn) {
  let transport;
  const wsURL = process.env.GADGETD_WS_URL;
  if (wsURL) {
    const ws = new WebSocket(wsURL);
    await new Promise((resolve, reject) => {
      ws.addEventListener("open", resolve);
      ws.addEventListener("error", () => reject(new Error(`cannot connect to ${wsURL}`)));
    });
    transport = webSocketTransport(ws);
  } else {
    transport = await dialTCP(process.env.GADGETD_CAPNP_ADDR);
  }
  const t = tap(transport);
  return { c: new Connection(transport, { Conn }), tap: t };
}

// settlesWithin resolves to "resolved", "rejected" or "pending" after
// waiting at most ms for p.
export async function settlesWithin(p, ms) {
  let timer;
  const pending = new Promise((resolve) => {
    timer = setTimeout(() => resolve("pending"), ms);
  });
  try {
    return await Promise.race([
      p.then(
        () => "resolved",
        () => "rejected",
      ),
      pending,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

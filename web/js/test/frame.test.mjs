// The gadget iframe's runtime (src/frame.js) outside a browser: the shell's
// relay joins one end of a MessageChannel to the gadget's websocket
// (/ws/frame?ticket=...), the runtime gets the other end, and session()
// gives the gadget's session. Run by client_test.go against a real gadgetd.

import assert from "node:assert/strict";
import { test } from "node:test";
import { capability, release, relay } from "../src/gadgetd.js";
import { attachPort, onSession, session } from "../src/frame.js";
import { Counter, Listener } from "./counter.mjs";
import { dial } from "./helpers.mjs";

const token = process.env.GADGETD_TOKEN;
const wsURL = process.env.GADGETD_WS_URL;

// frameSocket opens the websocket of a fresh frame ticket for gadget.
async function frameSocket(gadget) {
  const { ticket } = await gadget.frameTicket().promise();
  return new WebSocket(`${wsURL}/frame?ticket=${encodeURIComponent(ticket)}`);
}

// shellHandsPort does what the shell does for a frame: relays a new channel
// to the gadget's websocket and hands the runtime the other end. It returns
// the websocket.
async function shellHandsPort(gadget) {
  const { port1, port2 } = new MessageChannel();
  const ws = await frameSocket(gadget);
  relay(port1, ws);
  attachPort(port2);
  return ws;
}

test("the frame runtime's session, over a MessagePort the shell relays to /ws/frame, calls the gadget and hears it back", async () => {
  const { c } = await dial();
  try {
    const { workspace } = await c.login(token);
    const created = await workspace.create((p) => { p.blueprint = "counter"; }).promise();
    const pending = session(Counter); // before the port arrives, as a gadget UI's first line may
    const ws = await shellHandsPort(created.gadget);
    const counter = await pending;

    const heard = [];
    const listener = new Listener.Server({ async changed(p) { heard.push(p.value); } }).client();
    await counter.watch((p) => { p.listener = listener; }).promise();
    assert.equal((await counter.increment((p) => { p.by = 4n; }).promise()).value, 4n);
    assert.deepEqual(heard, [4n]);

    // The same gadget through the shell's own connection sees the change.
    const shellSession = capability(created.gadget.open(), 0, Counter);
    assert.equal((await shellSession.get().promise()).value, 4n);
    await release(shellSession);
    ws.close();
  } finally {
    c.close();
  }
});

test("after the gadget's websocket drops, the shell hands a fresh port and onSession gets a working session again", async () => {
  const { c } = await dial();
  try {
    const { workspace } = await c.login(token);
    const { gadget } = await workspace.create((p) => { p.blueprint = "counter"; }).promise();
    const sessions = [];
    let next;
    onSession(Counter, (s) => {
      sessions.push(s);
      next?.();
    });
    const arrived = () => new Promise((r) => (next = r));

    let got = arrived();
    const first = await frameSocket(gadget);
    const { port1, port2 } = new MessageChannel();
    relay(port1, first);
    attachPort(port2);
    await got;
    const before = sessions.length;
    await sessions.at(-1).increment().promise();

    first.close(); // the socket drops: calls on the old session fail
    await assert.rejects(sessions.at(-1).increment().promise(), /disconnected/);

    got = arrived();
    const second = await shellHandsPort(gadget);
    await got;
    assert.equal(sessions.length, before + 1);
    assert.equal((await sessions.at(-1).increment().promise()).value, 2n);
    second.close();
  } finally {
    c.close();
  }
});

// The transports and the connection's end, without a server: two Conns
// joined by a MessageChannel, one serving a Counter implemented in JS.

import assert from "node:assert/strict";
import { test } from "node:test";
import { Conn, DeferredTransport, Message } from "capnp-es";
import { Message as RpcMessage } from "capnp-es/capnp/rpc";
import { GadgetConn, connClass, fixes } from "../src/conn.js";
import { FrameTransport, MAX_RELAY_BUFFER, RELAY_OVERFLOW, messagePortTransport, relay } from "../src/transport.js";
import { Counter } from "./counter.mjs";
import { settlesWithin } from "./helpers.mjs";

// frame returns one serialized RPC message (an Abort with reason r), as a
// carrier would deliver it.
function frame(r) {
  const m = new Message();
  m.initRoot(RpcMessage)._initAbort().reason = r;
  return m.toArrayBuffer();
}

test("capnp-es's DeferredTransport loses the second of two messages that arrive in one task", async () => {
  const t = new DeferredTransport();
  const first = t.recvMessage();
  t.resolve(frame("one"));
  t.resolve(frame("two"));
  assert.equal((await first).abort.reason, "one");
  assert.equal(await settlesWithin(t.recvMessage(), 200), "pending", "the second message was kept after all: drop the FrameTransport fix?");
});

test("FrameTransport keeps every message that arrives while nobody is receiving, in order", async () => {
  const t = new FrameTransport(() => {}, () => {});
  const first = t.recvMessage();
  t.deliver(frame("one"));
  t.deliver(frame("two"));
  t.deliver(frame("three"));
  assert.equal((await first).abort.reason, "one");
  assert.equal((await t.recvMessage()).abort.reason, "two");
  assert.equal((await t.recvMessage()).abort.reason, "three");
  t.end(undefined);
  await assert.rejects(t.recvMessage());
});

// pair returns a client stub of a JS Counter served over a MessageChannel
// (the Conn classes of each side given), and the client's transport.
function pair(target, ClientConn = GadgetConn, ServerConn = GadgetConn) {
  const { port1, port2 } = new MessageChannel();
  const serverConn = new ServerConn(messagePortTransport(port2));
  serverConn.initMain(Counter, target);
  const transport = messagePortTransport(port1);
  const conn = new ClientConn(transport);
  return { counter: conn.bootstrap(Counter), transport, close: () => { transport.close(); port2.close(); } };
}

test("a Counter implemented in JS answers over a MessagePort, pipelined calls included", async () => {
  let value = 0n;
  const { counter, close } = pair({
    async increment(p, r) { value += p.by; r.value = value; },
    async get(_p, r) { r.value = value; },
  });
  try {
    const calls = [1n, 2n, 3n].map((by) => counter.increment((p) => { p.by = by; }).promise());
    assert.deepEqual((await Promise.all(calls)).map((r) => r.value), [1n, 3n, 6n]);
    assert.equal((await counter.get().promise()).value, 6n);
  } finally {
    close();
  }
});

// hanging is a Counter whose increment never returns.
const hanging = { increment: () => new Promise(() => {}) };

test("capnp-es's Conn leaves a call in flight pending forever when its transport closes", async () => {
  const { counter, transport, close } = pair(hanging, Conn);
  try {
    const call = counter.increment().promise();
    await new Promise((r) => setTimeout(r, 50)); // the call is out
    transport.close();
    assert.equal(await settlesWithin(call, 500), "pending", "capnp-es now fails calls on disconnect: drop failsOnDisconnect?");
  } finally {
    close();
  }
});

test("a call in flight, and a call made later, fail with 'disconnected' once the transport closes", async () => {
  const { counter, transport, close } = pair(hanging);
  try {
    const call = counter.increment().promise();
    await new Promise((r) => setTimeout(r, 50));
    transport.close();
    await assert.rejects(call, /disconnected/);
    await assert.rejects(counter.increment().promise(), /disconnected/);
  } finally {
    close();
  }
});

test("a call in flight when the server aborts the connection fails with the server's reason", async () => {
  const { port1, port2 } = new MessageChannel();
  const server = messagePortTransport(port2);
  const counter = new GadgetConn(messagePortTransport(port1)).bootstrap(Counter);
  try {
    const call = counter.get().promise();
    await server.recvMessage(); // the Bootstrap
    const abort = new Message().initRoot(RpcMessage);
    abort._initAbort().reason = "server busy: it serves its maximum number of connections; try again later";
    server.sendMessage(abort);
    await assert.rejects(call, /disconnected: the server closed the connection: server busy/);
  } finally {
    server.close();
    port1.close();
    port2.close();
  }
});

test("without failsOnDisconnect, a call in flight stays pending (the fix is what fails it)", async () => {
  const names = Object.keys(fixes).filter((n) => n !== "failsOnDisconnect");
  const { counter, transport, close } = pair(hanging, connClass(names));
  try {
    const call = counter.increment().promise();
    await new Promise((r) => setTimeout(r, 50));
    transport.close();
    assert.equal(await settlesWithin(call, 500), "pending");
  } finally {
    close();
  }
});

test("capnp-es's Conn serves its bootstrap capability as null once the reply is in (servesBootstrap fixes it)", async () => {
  const names = Object.keys(fixes).filter((n) => n !== "servesBootstrap");
  for (const [ServerConn, works] of [[connClass(names), false], [GadgetConn, true]]) {
    const { port1, port2 } = new MessageChannel();
    new ServerConn(messagePortTransport(port2)).initMain(Counter, { async get(_p, r) { r.value = 7n; } });
    const transport = messagePortTransport(port1);
    const counter = new GadgetConn(transport).bootstrap(Counter);
    try {
      await counter.get().promise(); // pipelined onto the bootstrap: works either way
      const later = counter.get().promise(); // sent once the bootstrap reply is in
      if (works) {
        assert.equal((await later).value, 7n);
      } else {
        await assert.rejects(later, /null client/);
      }
    } finally {
      transport.close();
      port2.close();
    }
  }
});

// unhandledDuring runs f and returns the unhandled rejections it caused.
async function unhandledDuring(f) {
  const seen = [];
  const note = (err) => seen.push(err);
  const listeners = process.listeners("unhandledRejection");
  process.removeAllListeners("unhandledRejection");
  process.on("unhandledRejection", note);
  try {
    await f();
    await new Promise((r) => setTimeout(r, 100)); // rejections are reported a tick late
  } finally {
    process.off("unhandledRejection", note);
    for (const l of listeners) {
      process.on("unhandledRejection", l);
    }
  }
  return seen;
}

test("a JS method that fails: capnp-es also rejects a promise nobody awaits (failsQuietly marks it handled)", async () => {
  const names = Object.keys(fixes).filter((n) => n !== "failsQuietly");
  for (const [ServerConn, quiet] of [[connClass(names), false], [GadgetConn, true]]) {
    const { port1, port2 } = new MessageChannel();
    new ServerConn(messagePortTransport(port2)).initMain(Counter, {
      async get() {
        throw new Error("get fails");
      },
    });
    const transport = messagePortTransport(port1);
    const counter = new GadgetConn(transport).bootstrap(Counter);
    try {
      const seen = await unhandledDuring(() => assert.rejects(counter.get().promise(), /get fails/));
      assert.equal(seen.length, quiet ? 0 : 1, `unhandled rejections: ${seen}`);
    } finally {
      transport.close();
      port2.close();
    }
  }
});

test("a JS method that is not async runs, but capnp-es fails its call (answersPlainMethods answers it)", async () => {
  const names = Object.keys(fixes).filter((n) => n !== "answersPlainMethods");
  for (const [ServerConn, works] of [[connClass(names), false], [GadgetConn, true]]) {
    let value = 0n;
    const { counter, close } = pair({
      increment(p, r) { value += p.by; r.value = value; },
      get() { throw new Error("get fails"); },
    }, GadgetConn, ServerConn);
    try {
      const inc = counter.increment((p) => { p.by = 2n; }).promise();
      if (!works) {
        await assert.rejects(inc, /reading 'then'/);
        assert.equal(value, 2n, "the method ran");
        continue;
      }
      assert.equal((await inc).value, 2n);
      await assert.rejects(counter.get().promise(), /get fails/);
      assert.equal((await counter.increment((p) => { p.by = 1n; }).promise()).value, 3n);
    } finally {
      close();
    }
  }
});

test("a call the peer answers Unimplemented: capnp-es waits forever (honorsUnimplemented fails it)", async () => {
  const names = Object.keys(fixes).filter((n) => n !== "honorsUnimplemented");
  for (const [ClientConn, fails] of [[connClass(names), false], [GadgetConn, true]]) {
    const { counter, close } = pair({ async get(_p, r) { r.value = 1n; } }, ClientConn);
    try {
      await counter.get().promise();
      // A method of an interface the serving side does not know.
      const unknown = { ...Counter.Client.methods[1], interfaceId: 0x1234n };
      const call = new Counter.Client(counter.client).client.call({ method: unknown }).struct();
      if (fails) {
        await assert.rejects(call, /unimplemented/);
        assert.equal((await counter.get().promise()).value, 1n, "the connection still works");
      } else {
        assert.equal(await settlesWithin(call, 500), "pending");
      }
    } finally {
      close();
    }
  }
});

test("answering Unimplemented, capnp-es keeps the question id, and the caller's next call breaks the connection (honorsUnimplemented frees it)", async () => {
  const names = Object.keys(fixes).filter((n) => n !== "honorsUnimplemented");
  for (const [ServerConn, works] of [[connClass(names), false], [GadgetConn, true]]) {
    const { counter, close } = pair({ async get(_p, r) { r.value = 1n; } }, GadgetConn, ServerConn);
    const seen = await unhandledDuring(async () => {
      try {
        await counter.get().promise();
        const unknown = { ...Counter.Client.methods[1], interfaceId: 0x1234n };
        await assert.rejects(counter.client.call({ method: unknown }).struct(), /unimplemented/);
        const next = counter.get().promise(); // reuses the returned call's question id
        assert.equal(await settlesWithin(next, 500), works ? "resolved" : "pending");
      } finally {
        close();
      }
    });
    assert.equal(seen.length, works ? 0 : 1, `errors: ${seen}`);
  }
});

// fakeSocket is enough of a browser WebSocket for relay: a connecting one
// until open(), whose send buffer drains only when drain() says so.
class FakeSocket extends EventTarget {
  constructor() {
    super();
    this.readyState = 0;
    this.bufferedAmount = 0;
    this.sent = 0;
    this.closedWith = null;
  }
  open() {
    this.readyState = 1;
    this.dispatchEvent(new Event("open"));
  }
  send(data) {
    this.bufferedAmount += data.byteLength;
    this.sent++;
  }
  close(code, reason) {
    if (this.readyState > 1) return;
    this.readyState = 3;
    this.closedWith = { code, reason };
    this.dispatchEvent(new Event("close"));
  }
}

test("relay cuts off a frame that sends faster than its socket drains, before and after the socket opens", async () => {
  for (const openFirst of [false, true]) {
    const { port1, port2 } = new MessageChannel();
    const ws = new FakeSocket();
    relay(port1, ws);
    if (openFirst) ws.open();
    const ended = new Promise((resolve) => port2.addEventListener("message", (ev) => ev.data === null && resolve()));
    port2.start();
    const chunk = 1 << 20;
    try {
      for (let i = 0; i < 20; i++) {
        port2.postMessage(new ArrayBuffer(chunk));
      }
      assert.equal(await settlesWithin(ended, 5000), "resolved", "the frame's port was never closed");
      assert.equal(ws.closedWith?.code, RELAY_OVERFLOW, openFirst ? "after open" : "before open");
      assert.ok(ws.sent * chunk <= MAX_RELAY_BUFFER, `sent ${ws.sent} MiB past the bound`);
    } finally {
      port1.close();
      port2.close();
    }
  }
});

test("relay lets a frame send without end while its socket drains", async () => {
  const { port1, port2 } = new MessageChannel();
  const ws = new FakeSocket();
  relay(port1, ws);
  ws.open();
  const chunk = 1 << 20;
  for (let i = 0; i < 40; i++) {
    port2.postMessage(new ArrayBuffer(chunk));
    await new Promise((r) => setTimeout(r, 1));
    ws.bufferedAmount = 0; // drained
  }
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(ws.closedWith, null);
  assert.equal(ws.sent, 40);
  port2.close();
  port1.close();
});

// The JS client against a real gadgetd (started by client_test.go, with the
// kernel's test counter as blueprint "counter"). Each capnp-es fix a server
// can provoke is shown twice: the bug, on a Conn without the fix, and the
// fix working, on GadgetConn.

import assert from "node:assert/strict";
import { test } from "node:test";
import { capability, onRelease, release } from "../src/gadgetd.js";
import { connClass, fixes } from "../src/conn.js";
import { Counter, Listener } from "./counter.mjs";
import { dial, settlesWithin } from "./helpers.mjs";

// releaseWait bounds the wait for a Release that must come: a hang guard.
const releaseWait = 30_000;

const token = process.env.GADGETD_TOKEN;
const maxExports = Number(process.env.GADGETD_MAX_EXPORTS);
if (!token || !maxExports) {
  throw new Error("run by client_test.go: GADGETD_TOKEN and GADGETD_MAX_EXPORTS are not set");
}

// without returns the Conn class with every fix but name.
const without = (name) => connClass(Object.keys(fixes).filter((n) => n !== name));

// newCounter creates a counter gadget and returns it with its id.
async function newCounter(workspace, name) {
  const res = await workspace
    .create((p) => {
      p.blueprint = "counter";
      p.name = name;
    })
    .promise();
  return { gadget: res.gadget, id: res.info.id };
}

// listener returns a Listener implemented in JS that records the values it
// hears, and whose onRelease resolves `released`.
function listener(changed = async () => {}) {
  const heard = [];
  let resolveReleased;
  const released = new Promise((r) => (resolveReleased = r));
  const server = new Listener.Server({
    async changed(p) {
      heard.push(p.value);
      await changed(p.value);
    },
    [onRelease]: () => resolveReleased(),
  });
  return { heard, released, server, stub: server.client() };
}

test("login: a wrong token fails with 'invalid token', the right one gives the user", async () => {
  const { c } = await dial();
  try {
    await assert.rejects(c.login("not-a-token"), /invalid token/);
    const { user } = await c.login(token);
    assert.equal(user.name, "js");
  } finally {
    c.close();
  }
});

test("create, open and increment go out pipelined, before any answer, and return the value", async () => {
  const { c, tap } = await dial();
  try {
    const { workspace } = await c.login(token);
    const calls = tap.count("send CALL");
    const returns = tap.count("recv RETURN");
    const created = workspace.create((p) => {
      p.blueprint = "counter";
    });
    const session = capability(created.getGadget().open(), 0, Counter);
    const incremented = session.increment((p) => {
      p.by = 5n;
    });
    // Nothing has yielded to the event loop: no answer can have arrived,
    // yet all three calls are on the wire.
    assert.equal(tap.count("send CALL") - calls, 3);
    assert.equal(tap.count("recv RETURN"), returns);
    assert.equal((await incremented.promise()).value, 5n);
    assert.equal((await session.get().promise()).value, 5n);
    assert.equal((await created.promise()).info.blueprint, "counter");
  } finally {
    c.close();
  }
});

test("a listener implemented in JS hears increments from another connection, called from inside the wasm sandbox", async () => {
  const a = await dial();
  const b = await dial();
  try {
    const { workspace } = await a.c.login(token);
    const { gadget, id } = await newCounter(workspace, "watched");
    const session = capability(gadget.open(), 0, Counter);
    const l = listener();
    const watched = await session.watch((p) => { p.listener = l.stub; }).promise();
    assert.equal(watched.value, 0n);

    const other = (await b.c.login(token)).workspace;
    const otherSession = capability(other.open((p) => { p.id = id; }).getGadget().open(), 0, Counter);
    await otherSession.increment((p) => { p.by = 2n; }).promise();
    await otherSession.increment((p) => { p.by = 3n; }).promise();
    assert.deepEqual(l.heard, [2n, 5n]);
  } finally {
    a.c.close();
    b.c.close();
  }
});

// watchThenRelease watches a fresh counter with a JS listener, releases the
// watch handle, and returns what the listener heard of an increment made
// after that.
async function watchThenRelease(Conn) {
  const { c, tap } = await dial(Conn);
  try {
    const { workspace } = await c.login(token);
    const { gadget } = await newCounter(workspace, "released");
    const session = capability(gadget.open(), 0, Counter);
    const l = listener();
    const watched = await session.watch((p) => { p.listener = l.stub; }).promise();
    await session.increment().promise();
    assert.deepEqual(l.heard, [1n], "the listener hears the watched counter");
    await release(watched.handle);
    if (Conn === undefined) {
      // The server unsubscribed: it lets go of our listener, which is the
      // Release we wait for (honorsRelease turns it into onRelease).
      assert.equal(await settlesWithin(l.released, releaseWait), "resolved",
        "the server never let go of the listener: it did not unsubscribe, so it did not see our Release");
      assert.ok(tap.count("send RELEASE") >= 1);
    }
    await session.increment().promise();
    return l.heard;
  } finally {
    c.close();
  }
}

test("capnp-es's own Conn never sends Release: the server keeps calling a listener whose handle was released", async () => {
  assert.deepEqual(await watchThenRelease(without("sendsRelease")), [1n, 2n]);
});

test("releasing the watch handle unsubscribes on the server: the server sees the Release", async () => {
  assert.deepEqual(await watchThenRelease(undefined), [1n]);
});

// openMany opens one gadget n times on one connection, releasing each (the
// gadget and its results) before the next, and returns how many opened.
async function openMany(Conn, n) {
  const { c } = await dial(Conn);
  try {
    const { workspace } = await c.login(token);
    const { gadget, id } = await newCounter(workspace, "opened");
    await release(gadget);
    let opened = 0;
    try {
      for (; opened < n; opened++) {
        const res = await workspace.open((p) => { p.id = id; }).promise();
        await release(res);
      }
    } catch (err) {
      assert.match(String(err), /disconnected/);
    }
    return opened;
  } finally {
    c.close();
  }
}

test("without sendsRelease, the server's bound on held capabilities cuts the connection off", async () => {
  const opened = await openMany(without("sendsRelease"), 2 * maxExports);
  assert.ok(opened < maxExports, `opened ${opened} gadgets, the bound is ${maxExports}`);
});

test("with sendsRelease, a client that releases what it drops opens past the bound", async () => {
  assert.equal(await openMany(undefined, 2 * maxExports), 2 * maxExports);
});

// failingListener watches a fresh counter with a listener that fails, makes
// the server call it, and waits until the server's Release of it arrives.
// It returns the listener and the connection.
async function failingListener(Conn) {
  const d = await dial(Conn);
  const { workspace } = await d.c.login(token);
  const { gadget } = await newCounter(workspace, "failing");
  const session = capability(gadget.open(), 0, Counter);
  const l = listener(async () => {
    throw new Error("this listener fails");
  });
  await session.watch((p) => { p.listener = l.stub; }).promise();
  await session.increment().promise(); // the guest drops the listener that failed
  await d.tap.until("recv RELEASE");
  return { l, ...d };
}

// exported reports whether server is in conn's export table.
const exported = (conn, server) => conn.exports.some((e) => e && e.rc.client() === server);

test("capnp-es's own Conn drops an incoming Release: the listener the server let go stays exported", async () => {
  const { l, c } = await failingListener(without("honorsRelease"));
  try {
    assert.deepEqual(l.heard, [1n]);
    assert.ok(exported(c.conn, l.server), "the released listener is still in the export table");
  } finally {
    c.close();
  }
});

test("an incoming Release frees the listener the server let go, and runs its onRelease", async () => {
  const { l, c } = await failingListener(undefined);
  try {
    assert.equal(await settlesWithin(l.released, releaseWait), "resolved", "onRelease never ran");
    assert.equal(exported(c.conn, l.server), false);
  } finally {
    c.close();
  }
});

test("release of a pipelined stub, and of a failed call's, do not throw", async () => {
  const { c } = await dial();
  try {
    const { workspace } = await c.login(token);
    const gadget = workspace.create((p) => { p.blueprint = "counter"; }).getGadget();
    await release(gadget);
    const missing = workspace.open((p) => { p.id = "no-such-gadget"; }).getGadget();
    await release(missing);
    await assert.rejects(workspace.open((p) => { p.id = "no-such-gadget"; }).promise(), /unknown gadget/);
  } finally {
    c.close();
  }
});

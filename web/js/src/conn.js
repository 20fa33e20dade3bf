// GadgetConn: capnp-es's Conn with the fixes gadgetd needs to talk to a
// go-capnp peer for long (PATCHES.md has each bug, how it shows and how it
// was confirmed against capnp-es itself).
//
// Each fix is a mixin (a function from a Conn class to a subclass), so the
// tests can build a Conn with every fix but one and watch that one fail.
// They override Conn's methods (handleMessage, handleCallMessage,
// handleBootstrapMessage, addImport, insertAnswer, releaseExport,
// sendMessage, work), call the originals for everything they do not fix,
// and read its tables (imports, exports, answers, questions): internals,
// which the exact version pin in package.json keeps still. A mixin must not
// declare class fields: capnp-es's constructor starts the work loop before a
// subclass's fields exist.
//
// Ownership: a Conn and everything it touches runs on the one JS thread;
// messages are handled one at a time, in arrival order.

import { Conn, Interface, Message, Registry, Server, utils } from "capnp-es";
import {
  CapDescriptor,
  Disembargo_Context_Which,
  Message as RpcMessage,
  Resolve,
} from "capnp-es/capnp/rpc";

// onRelease names the method a capability implemented in JS may define to
// hear that the peer let go of it (its last wire reference was released).
export const onRelease = Symbol.for("gadgetd.onRelease");

function newRpcMessage() {
  return new Message().initRoot(RpcMessage);
}

function sendRelease(conn, id, count) {
  const m = newRpcMessage();
  const r = m._initRelease();
  r.id = id;
  r.referenceCount = count;
  conn.sendMessage(m);
}

// sendsRelease: capnp-es's import client has an empty close(), so a
// capability the peer exported is never released and the peer keeps its
// object (and counts it against this connection) until the connection ends.
// Here the last local reference going away sends Release with the number of
// times the peer sent us the capability.
export const sendsRelease = (Base) =>
  class extends Base {
    addImport(id) {
      const fresh = !this.imports[id];
      const ref = super.addImport(id);
      if (fresh) {
        const entry = this.imports[id];
        const client = entry.rc.client();
        client.close = () => {
          client.closed = true;
          if (this.imports[id] !== entry) {
            return;
          }
          delete this.imports[id];
          if (!this.transport.closed) {
            sendRelease(this, id, entry.refs);
          }
        };
      }
      return ref;
    }
  };

// honorsRelease: capnp-es drops an incoming Release, so a capability we
// exported (a listener we passed to the server) stays in the export table,
// and its JS object alive, forever. Here it is released as the peer asks,
// and the object's [onRelease]() runs when the peer holds no reference.
export const honorsRelease = (Base) =>
  class extends Base {
    handleMessage(m) {
      if (m.which() !== RpcMessage.RELEASE) {
        return super.handleMessage(m);
      }
      const { release } = m;
      this.releaseExport(release.id, release.referenceCount);
    }

    releaseExport(id, refs) {
      const e = this.findExport(id);
      super.releaseExport(id, refs);
      if (e && this.exports[id] !== e) {
        e.rc.client().target?.[onRelease]?.();
      }
    }
  };

// honorsResolve: a capability the peer sent as a promise (senderPromise) is
// later resolved by a Resolve message, whose descriptor gives us one more
// reference to the resolution. capnp-es drops the message, so that reference
// leaks on the peer for the life of the connection. We keep calling through
// the promise (the peer forwards those calls, in order, so no embargo is
// needed) and release the reference the Resolve gave us at once.
export const honorsResolve = (Base) =>
  class extends Base {
    handleMessage(m) {
      if (m.which() !== RpcMessage.RESOLVE) {
        return super.handleMessage(m);
      }
      const { resolve } = m;
      if (resolve.which() !== Resolve.CAP) {
        return; // an exception: calls through the promise fail on the peer
      }
      const d = resolve.cap;
      switch (d.which()) {
        case CapDescriptor.SENDER_HOSTED: {
          sendRelease(this, d.senderHosted, 1);
          break;
        }
        case CapDescriptor.SENDER_PROMISE: {
          sendRelease(this, d.senderPromise, 1);
          break;
        }
        // receiverHosted and receiverAnswer name our own objects and carry
        // no reference; none carries a third party here.
      }
    }
  };

// honorsDisembargo: when the peer pipelines a call onto one of our answers
// and that answer turns out to be the peer's own capability, the peer
// embargoes its new direct calls until a Disembargo it sends us comes back.
// capnp-es drops the Disembargo, so those calls wait forever. It also never
// delivers the pipelined calls that arrived before the answer (its queue
// client is never flushed, and is built with a wrong length so every later
// call through it fails "queue full"). Here those calls are delivered in
// order as the answer is fulfilled, and the Disembargo is reflected back
// (receiverLoopback) once they have been sent.
export const honorsDisembargo = (Base) =>
  class extends Base {
    insertAnswer(id) {
      const a = super.insertAnswer(id);
      if (a) {
        const fulfill = a.fulfill;
        a.fulfill = (obj) => {
          fulfill.call(a, obj);
          deliverQueuedCalls(obj.segment.message._capnp.capTable);
        };
      }
      return a;
    }

    handleMessage(m) {
      if (m.which() !== RpcMessage.DISEMBARGO) {
        return super.handleMessage(m);
      }
      const { disembargo } = m;
      if (disembargo.context.which() !== Disembargo_Context_Which.SENDER_LOOPBACK) {
        return; // we never send senderLoopback, so expect no receiverLoopback
      }
      const reply = newRpcMessage();
      const d = reply._initDisembargo();
      d.target = disembargo.target;
      d._initContext().receiverLoopback = disembargo.context.senderLoopback;
      this.sendMessage(reply);
    }
  };

// deliverQueuedCalls replaces each capnp-es queue client in capTable with the
// capability it wraps, after sending it the calls queued on it, in order.
function deliverQueuedCalls(capTable) {
  for (const [i, c] of (capTable ?? []).entries()) {
    if (!c || typeof c.pushEmbargo !== "function") {
      continue; // not a queue client
    }
    for (const queued of c.calls.data) {
      if (queued?.a) {
        c._client.call(queued.call).struct().then(
          (s) => queued.a.fulfill(s),
          (err) => queued.a.reject(err),
        );
      }
    }
    capTable[i] = c._client;
  }
}

// failsOnDisconnect: capnp-es leaves every call in flight pending forever
// when its transport ends, and a call made afterwards throws from inside the
// transport. Here both fail with an error that says the connection is gone,
// and why when the server said so in an Abort ("server busy…"), so a UI can
// tell the user and reconnect.
export const failsOnDisconnect = (Base) =>
  class extends Base {
    async work() {
      try {
        await super.work();
      } finally {
        for (const q of this.questions) {
          failQuestion(q, this.abortReason);
        }
      }
    }

    shutdown(err) {
      // An Abort's reason; set before the transport closes.
      this.abortReason ??= err?.exception?.reason;
      return super.shutdown(err);
    }

    sendMessage(msg) {
      if (!this.transport.closed) {
        return super.sendMessage(msg);
      }
      const w = msg.which();
      if (w === RpcMessage.CALL) {
        failQuestion(this.questions[msg.call.questionId], this.abortReason);
      } else if (w === RpcMessage.BOOTSTRAP) {
        failQuestion(this.questions[msg.bootstrap.questionId], this.abortReason);
      }
    }
  };

const QUESTION_IN_PROGRESS = 0; // capnp-es's QuestionState.IN_PROGRESS

function failQuestion(q, abortReason) {
  if (q && q.state === QUESTION_IN_PROGRESS) {
    // Marked handled: a pipelined call nobody awaits must not become an
    // unhandled rejection; whoever awaits it still sees the error.
    q.deferred.promise.catch(() => {});
    const why = abortReason ? `the server closed the connection: ${abortReason}` : "the connection to the server is closed";
    q.reject(new Error(`gadgetd: disconnected: ${why}`));
  }
}

// servesBootstrap: capnp-es answers a Bootstrap with its main capability in
// the reply's cap table but a null pointer as the content, so the peer gets
// a null capability (pipelined calls sent before the reply happen to work).
// Here the content points at the capability. Only a JS side that serves a
// bootstrap (initMain) needs this; gadgetd's browser clients do not, the
// tests' JS peers do.
export const servesBootstrap = (Base) =>
  class extends Base {
    handleBootstrapMessage(m) {
      const a = this.main === undefined ? null : this.insertAnswer(m.bootstrap.questionId);
      if (!a) {
        return super.handleBootstrapMessage(m); // it reports the error
      }
      const msg = new Message();
      const content = new Interface(msg.getSegment(0), 0);
      utils.setInterfacePointer(msg.addCap(this.main), content);
      a.fulfill(content);
    }
  };

// failsQuietly: when a method of a capability implemented in JS fails,
// capnp-es sends the exception to the caller, and also rejects a promise of
// its own that nobody awaits: an unhandled rejection, which ends a Node
// process and litters a browser's console. Here that promise is marked
// handled; the caller still gets the exception.
export const failsQuietly = (Base) =>
  class extends Base {
    insertAnswer(id) {
      const a = super.insertAnswer(id);
      a?.deferred.promise.catch(() => {});
      return a;
    }
  };

// honorsUnimplemented: a peer that does not understand a message sends it
// back in an Unimplemented message (capnp-es itself does so for a call to an
// interface it does not know). capnp-es ignores Unimplemented, so the call
// waits forever. Here a returned call or bootstrap fails, saying so. And
// capnp-es, answering Unimplemented, keeps the call's question id as in use,
// so the caller's next call, which may reuse it, kills the connection; here
// the call is sent back before it takes the id.
export const honorsUnimplemented = (Base) =>
  class extends Base {
    handleCallMessage(m) {
      const { call } = m;
      if (Registry.lookup(call.interfaceId)?.methods[call.methodId]) {
        return super.handleCallMessage(m);
      }
      const back = newRpcMessage();
      back.unimplemented = m;
      this.sendMessage(back);
    }

    handleMessage(m) {
      if (m.which() !== RpcMessage.UNIMPLEMENTED) {
        return super.handleMessage(m);
      }
      const back = m.unimplemented;
      let q;
      if (back.which() === RpcMessage.CALL) {
        const { call } = back;
        q = this.popQuestion(call.questionId);
        q?.reject?.call(
          q,
          new Error(
            `gadgetd: unimplemented: the peer does not implement method ${call.methodId} of interface 0x${call.interfaceId.toString(16)}`,
          ),
        );
      } else if (back.which() === RpcMessage.BOOTSTRAP) {
        q = this.popQuestion(back.bootstrap.questionId);
        q?.reject?.call(q, new Error("gadgetd: unimplemented: the peer serves no bootstrap capability"));
      }
    }
  };

// answersPlainMethods: capnp-es calls a method of a capability implemented
// in JS and chains .then on what it returns, so a method that is not async
// runs, and its caller gets "Cannot read properties of undefined (reading
// 'then')" instead of its results. Here every method of a Server the Conn
// exports answers a promise, whatever it returns.
export const answersPlainMethods = (Base) =>
  class extends Base {
    addExport(client) {
      answerPromises(serverOf(client));
      return super.addExport(client);
    }
  };

// serverOf returns the Server a client reference leads to, or undefined
// for a capability that is not implemented here.
function serverOf(client) {
  for (let c = client, depth = 0; c && depth < 8; depth++) {
    if (c instanceof Server) {
      return c;
    }
    c = c.rc?._client ?? c._client ?? c.client;
  }
  return undefined;
}

// promised marks the Servers whose methods answerPromises has wrapped.
const promised = new WeakSet();

function answerPromises(server) {
  if (!server || promised.has(server)) {
    return;
  }
  promised.add(server);
  for (const m of server.methods) {
    const impl = m.impl;
    if (typeof impl === "function") {
      m.impl = async function (...args) {
        return impl.apply(this, args);
      };
    }
  }
}

// fixes lists every fix, in the order they are applied.
export const fixes = {
  sendsRelease,
  honorsRelease,
  honorsResolve,
  honorsDisembargo,
  failsOnDisconnect,
  servesBootstrap,
  failsQuietly,
  honorsUnimplemented,
  answersPlainMethods,
};

// connClass builds Conn with the named fixes (all of them by default).
export function connClass(names = Object.keys(fixes)) {
  return names.reduce((C, name) => fixes[name](C), Conn);
}

// GadgetConn is capnp-es's Conn with every fix.
export const GadgetConn = connClass();

// The gadget iframe's runtime (bundled as web/static/frame.js, a classic
// script that defines the global `gadgetd`). The iframe has no network: its
// one channel is a MessagePort the shell hands it, which the shell relays to
// the gadget's websocket (gadgetd.js relay). The bootstrap capability at the
// other end is this gadget's session, nothing else.
//
// Public API (window.gadgetd):
//
//   session(Interface?) -> Promise<stub>
//       The session, as a stub of the blueprint's session interface (a
//       generated capnp-es interface class, e.g. Counter; omitted: a bare
//       stub with .client, to cast later with new Interface.Client(s.client)).
//       Waits for the shell's port.
//   onSession(Interface, callback)
//       Calls callback(stub) with the session now (if connected) and again
//       after every reconnect: the shell hands a fresh port when the gadget's
//       websocket was dropped and reopened, and the old stubs then fail.
//   release(stubOrResults), capability(...), onRelease, capnp
//       As in gadgetd.js.
//
// The shell's side of the handshake: it posts {gadgetd: "port"} to the
// iframe's window with one MessagePort transferred; only messages from the
// parent window count.

import * as capnp from "capnp-es";
import { GadgetConn, onRelease } from "./conn.js";
import { messagePortTransport } from "./transport.js";
import { capability, release } from "./caps.js";

export { capability, capnp, onRelease, release };

// AnyCap wraps a bootstrap client that has no interface yet.
const AnyCap = { Client: class { constructor(client) { this.client = client; } } };

let current = null; // the bootstrap stub of the live connection
const waiting = []; // resolve functions of session() calls made before a port
const subscribers = []; // onSession registrations: {Interface, callback}

function cast(stub, Interface) {
  if (!Interface) {
    return stub;
  }
  const Client = Interface.Client ?? Interface;
  return new Client(stub.client);
}

function attach(port) {
  const transport = messagePortTransport(port);
  const conn = new GadgetConn(transport);
  conn.onError = (err) => {
    console.error("gadgetd: session connection failed:", err);
    transport.close();
  };
  const stub = conn.bootstrap(AnyCap);
  current = stub;
  transport.ended.then(() => {
    if (current === stub) {
      current = null;
    }
  });
  for (const resolve of waiting.splice(0)) {
    resolve(stub);
  }
  for (const s of subscribers) {
    s.callback(cast(stub, s.Interface));
  }
  return transport;
}

if (typeof window !== "undefined") {
  window.addEventListener("message", (ev) => {
    if (ev.source !== window.parent || ev.data?.gadgetd !== "port" || ev.ports.length !== 1) {
      return;
    }
    attach(ev.ports[0]);
  });
}

export function session(Interface) {
  if (current) {
    return Promise.resolve(cast(current, Interface));
  }
  return new Promise((resolve) => waiting.push(resolve)).then((s) => cast(s, Interface));
}

export function onSession(Interface, callback) {
  subscribers.push({ Interface, callback });
  if (current) {
    callback(cast(current, Interface));
  }
}

// attachPort is for tests that drive the runtime outside a browser: it
// takes the port as the shell's message would, and returns its transport.
export { attach as attachPort };

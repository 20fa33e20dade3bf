// gadgetd's JavaScript client, for the browser shell (bundled as
// web/static/gadgetd.js, an ES module).
//
// Public API:
//
//   connect(url) -> Promise<Connection>
//       Opens a websocket to gadgetd's /ws endpoint (one Cap'n Proto message
//       per binary frame) and bootstraps its Gateway.
//   Connection
//       .gateway            the Gateway stub (schema.workspace.Gateway)
//       .login(token)       -> Promise<{workspace, user: {id, name}}>; fails
//                              with the server's "invalid token"
//       .close()            ends the connection
//       .closed             a Promise that settles when the connection ends
//   release(stubOrResults)
//       Lets go of a capability (a stub, also a pipelined one) or of every
//       capability in a results struct, so the server frees it now rather
//       than when the connection ends. Returns a Promise.
//   capability(resultsOrPromise, pointerIndex, Interface)
//       The capability in an untyped `:Capability` field as a typed stub,
//       e.g. capability(gadget.open(), 0, Counter) is the session, pipelined.
//   relay(port, webSocket)
//       Joins one end of a MessageChannel to a gadget's websocket
//       (/ws/frame?ticket=...): the shell's half of the iframe channel (see
//       frame.js). Frames pass as they are, both ways; either end closing
//       closes the other.
//   onRelease
//       A symbol: a capability implemented in JS (a Listener passed to the
//       server) may define [onRelease]() to hear that the server let it go.
//   schema.workspace, schema.gadget
//       The generated bindings of gadgetd's own schema (capnp-es classes).
//   capnp
//       capnp-es itself, for dynamic use.
//
// Stubs are capnp-es's: `workspace.create((p) => { p.blueprint = "counter" })`
// returns a results promise; `.promise()` awaits it; `.getGadget()` pipelines.
// Calls fail with an Error whose message carries the server's reason.

import * as capnp from "capnp-es";
import { GadgetConn, onRelease } from "./conn.js";
import { relay, webSocketTransport } from "./transport.js";
import * as workspace from "./schema/workspace.js";
import * as gadget from "./schema/gadget.js";
import { capability, release } from "./caps.js";

export { capability, capnp, onRelease, relay, release };
export const schema = { workspace, gadget };

export class Connection {
  // transport: a FrameTransport (transport.js). options.Conn replaces the
  // connection class (the tests use capnp-es's own to show its bugs).
  constructor(transport, options = {}) {
    this.transport = transport;
    this.conn = new (options.Conn ?? GadgetConn)(transport);
    this.conn.onError = (err) => {
      console.error("gadgetd: connection failed:", err);
      transport.close();
    };
    this.gateway = this.conn.bootstrap(workspace.Gateway);
    this.closed = transport.ended;
  }

  async login(token) {
    const res = await this.gateway
      .login((p) => {
        p.token = token;
      })
      .promise();
    return { workspace: res.workspace, user: { id: res.user.id, name: res.user.name } };
  }

  close() {
    this.transport.close();
  }
}

// connect opens a Connection to url (ws: or wss:). options.WebSocket
// replaces the global WebSocket class (Node before 22).
export function connect(url, options = {}) {
  const WS = options.WebSocket ?? globalThis.WebSocket;
  return new Promise((resolve, reject) => {
    const ws = new WS(url);
    ws.binaryType = "arraybuffer";
    const failed = () => reject(new Error(`gadgetd: cannot connect to ${url}`));
    ws.addEventListener("error", failed);
    ws.addEventListener("open", () => {
      ws.removeEventListener("error", failed);
      resolve(new Connection(webSocketTransport(ws)));
    });
  });
}

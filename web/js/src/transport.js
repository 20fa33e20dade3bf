// Transports: how capnp-es's Conn sends and receives whole Cap'n Proto
// messages over a carrier that already delimits them (a websocket's binary
// frames, a MessagePort's messages).
//
// capnp-es's own DeferredTransport keeps a single pending receive: a frame
// that arrives while no receive is waiting (two frames in one task, or a
// frame while the Conn is still handling the previous one) resolves a
// promise nobody reads, and is lost. FrameTransport queues frames instead
// (PATCHES.md, "the deferred transport loses a message").
//
// Ownership: everything here runs on the one JS thread. deliver, end and
// fail are called by the carrier's event handlers; recvMessage by the Conn's
// work loop, which asks for one message at a time.

import { Message } from "capnp-es";
import { Message as RpcMessage } from "capnp-es/capnp/rpc";

export class FrameTransport {
  #send;
  #closeCarrier;
  #frames = []; // received, not yet asked for
  #waiting = []; // receives asked for, nothing received yet: {resolve, reject}
  #closed = false;
  #error; // why the transport ended; undefined for an orderly end
  #ended;

  // ended resolves (with the error, or undefined) once the carrier closed.
  ended = new Promise((resolve) => {
    this.#ended = resolve;
  });

  // send(bytes: Uint8Array) puts one message on the carrier; closeCarrier()
  // shuts it.
  constructor(send, closeCarrier) {
    this.#send = send;
    this.#closeCarrier = closeCarrier;
  }

  // deliver hands the transport one received frame (one whole message in
  // the standard stream framing).
  deliver(frame) {
    if (this.#closed) {
      return;
    }
    const w = this.#waiting.shift();
    if (w) {
      settle(w, frame);
    } else {
      this.#frames.push(frame);
    }
  }

  // end says the carrier closed. Frames already received are still read;
  // then receives fail with err (undefined: an orderly end, which capnp-es's
  // work loop takes as "stop").
  end(err) {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    this.#error = err;
    this.#ended(err);
    for (const w of this.#waiting.splice(0)) {
      w.reject(err);
    }
  }

  get closed() {
    return this.#closed;
  }

  recvMessage() {
    if (this.#frames.length > 0) {
      return new Promise((resolve, reject) => settle({ resolve, reject }, this.#frames.shift()));
    }
    if (this.#closed) {
      return Promise.reject(this.#error);
    }
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  sendMessage(msg) {
    if (this.#closed) {
      throw new Error("gadgetd: the connection is closed");
    }
    this.#send(new Uint8Array(msg.segment.message.toArrayBuffer()));
  }

  close() {
    this.end(undefined);
    this.#frames.length = 0;
    this.#closeCarrier();
  }
}

function settle(w, frame) {
  try {
    w.resolve(new Message(frame, false).getRoot(RpcMessage));
  } catch (err) {
    w.reject(err);
  }
}

// webSocketTransport carries one message per binary frame over ws, a
// WebSocket (the browser's, or Node's).
export function webSocketTransport(ws) {
  ws.binaryType = "arraybuffer";
  const t = new FrameTransport(
    (bytes) => ws.send(bytes),
    () => ws.close(),
  );
  ws.addEventListener("message", (ev) => {
    if (ev.data instanceof ArrayBuffer) {
      t.deliver(ev.data);
    } else {
      t.end(new Error("gadgetd: the server sent a text frame"));
      ws.close(1003);
    }
  });
  ws.addEventListener("close", () => t.end(undefined));
  ws.addEventListener("error", () => t.end(new Error("gadgetd: websocket error")));
  return t;
}

// messagePortTransport carries one message per postMessage over port (the
// gadget iframe's end of the channel the shell relays to the gadget's
// websocket). A null message from the other end means it closed.
export function messagePortTransport(port) {
  const t = new FrameTransport(
    (bytes) => port.postMessage(bytes.buffer, [bytes.buffer]),
    () => {
      port.postMessage(null);
      port.close();
    },
  );
  port.addEventListener("message", (ev) => {
    if (ev.data instanceof ArrayBuffer) {
      t.deliver(ev.data);
    } else if (ev.data === null) {
      t.end(undefined);
      port.close();
    }
  });
  port.start();
  return t;
}

// MAX_RELAY_BUFFER bounds the bytes a frame may have waiting in the shell:
// its messages held until the socket opens, or the socket's send buffer. It
// is well above the server's bound on one message (9 MiB by default), so a
// frame that waits for its answers never meets it.
export const MAX_RELAY_BUFFER = 16 << 20;

// RELAY_OVERFLOW is the close code of a socket whose frame went past
// MAX_RELAY_BUFFER (codes 4000-4999 are the application's).
export const RELAY_OVERFLOW = 4008;

// relay joins port (one end of a MessageChannel whose other end a gadget
// iframe holds) to ws, the gadget's websocket: each binary frame goes
// across as it is, both ways. Either side closing closes the other. A frame
// that sends faster than the socket drains, past MAX_RELAY_BUFFER, is cut
// off: its socket is closed with RELAY_OVERFLOW rather than the shell's
// memory growing with what it sends (the frame is untrusted).
export function relay(port, ws) {
  ws.binaryType = "arraybuffer";
  const pending = []; // frames from the port before the socket opened
  let pendingBytes = 0;
  port.addEventListener("message", (ev) => {
    if (ev.data === null) {
      ws.close();
      port.close();
      return;
    }
    if (!(ev.data instanceof ArrayBuffer) || ws.readyState > 1) {
      return;
    }
    const waiting = ws.readyState === 0 ? pendingBytes : ws.bufferedAmount;
    if (waiting + ev.data.byteLength > MAX_RELAY_BUFFER) {
      pending.length = 0;
      ws.close(RELAY_OVERFLOW, "the gadget's frame sent faster than its socket drains");
      return;
    }
    if (ws.readyState === 0) {
      pending.push(ev.data);
      pendingBytes += ev.data.byteLength;
    } else {
      ws.send(ev.data);
    }
  });
  ws.addEventListener("open", () => {
    for (const f of pending.splice(0)) {
      ws.send(f);
    }
    pendingBytes = 0;
  });
  ws.addEventListener("message", (ev) => {
    if (ev.data instanceof ArrayBuffer) {
      port.postMessage(ev.data, [ev.data]);
    }
  });
  ws.addEventListener("close", () => {
    port.postMessage(null);
    port.close();
  });
  port.start();
}

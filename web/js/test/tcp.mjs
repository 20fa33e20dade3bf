// tcpTransport: a FrameTransport over a Node socket speaking Cap'n Proto's
// standard stream framing (how gadgetd's TCP port and go-capnp speak). The
// tests use it to reach a go-capnp peer; browsers have no sockets.

import net from "node:net";
import { FrameTransport } from "../src/transport.js";

// frameLength returns the byte length of the message at the start of buf, or
// -1 when buf does not yet hold its segment table.
function frameLength(buf) {
  if (buf.length < 4) {
    return -1;
  }
  const segments = buf.readUInt32LE(0) + 1;
  const header = 4 * (segments + 1) + (segments % 2 === 0 ? 4 : 0);
  if (buf.length < header) {
    return -1;
  }
  let words = 0;
  for (let i = 0; i < segments; i++) {
    words += buf.readUInt32LE(4 + 4 * i);
  }
  return header + 8 * words;
}

export function tcpTransport(socket) {
  const t = new FrameTransport(
    (bytes) => socket.write(bytes),
    () => socket.destroy(),
  );
  let pending = Buffer.alloc(0);
  socket.on("data", (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      const n = frameLength(pending);
      if (n < 0 || pending.length < n) {
        return;
      }
      const frame = new Uint8Array(n);
      frame.set(pending.subarray(0, n));
      pending = pending.subarray(n);
      t.deliver(frame.buffer);
    }
  });
  socket.on("close", () => t.end(undefined));
  socket.on("error", () => {});
  return t;
}

// dialTCP connects to "host:port" and returns the transport once connected.
export function dialTCP(addr) {
  const i = addr.lastIndexOf(":");
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: addr.slice(0, i), port: Number(addr.slice(i + 1)) });
    s.once("connect", () => resolve(tcpTransport(s)));
    s.once("error", reject);
  });
}

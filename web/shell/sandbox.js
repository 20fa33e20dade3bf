// The gadget's iframe: the browser half of the double sandbox. This module
// is the one place that builds it; docs/RATIONALE.md ("The gadget iframe")
// explains the choices, and web/browsertest proves what it holds back.
//
// A gadget's UI is untrusted HTML. It runs in <iframe sandbox="allow-scripts"
// srcdoc=…>: an opaque origin, so it cannot read the shell's DOM, cookies or
// storage, nor another gadget's frame; no popups, no top navigation, no
// forms. Its document carries a Content-Security-Policy (frameCSP) that
// allows no network at all, and only the scripts this module hashed.
//
// Every script the frame may run begins with PRELUDE, which deletes
// RTCPeerConnection and its relatives (CSP does not govern WebRTC in
// Chromium). The prelude is part of each allowed script, not a script of its
// own, because a srcdoc frame's policy is inherited by any frame it nests:
// a gadget could otherwise nest a srcdoc frame that re-runs one of its
// allowed scripts in a fresh window where RTCPeerConnection still exists. An
// allowed script always deletes it first, whatever window it runs in, and
// if the deletion fails the script stops before the gadget's code.
//
// A srcdoc document also inherits the shell's own policy, which allows only
// the shell's scripts and those with the page's nonce: the allowed scripts
// carry that nonce for it. The nonce is not what keeps the frame offline
// (a script with the nonce could still import from anywhere as far as the
// shell's policy goes); the frame's own hash-only policy is.

// SANDBOX is the iframe's sandbox attribute: scripts, and nothing else. Never
// allow-same-origin: with it the frame could script the shell.
export const SANDBOX = "allow-scripts";

// prelude runs at the start of every script in the frame; see above.
function prelude() {
  const g = globalThis;
  for (const name of Object.getOwnPropertyNames(g)) {
    if (/^(webkit|moz)?RTC/.test(name)) {
      delete g[name];
    }
  }
  if (Object.getOwnPropertyNames(g).some((name) => /^(webkit|moz)?RTC/.test(name))) {
    throw new Error("gadgetd: the frame's prelude could not remove WebRTC");
  }
}

// PRELUDE is the source text the builder puts at the start of each script.
export const PRELUDE = `(${prelude})();\n`;

// frameCSP is the policy of a gadget's frame document, given the hashes of
// the scripts it may run ("sha256-…" sources). No source is a URL: nothing
// is fetched, sent or navigated to. Styles and images may be inline or
// data: URLs, which load nothing.
export function frameCSP(scriptHashes) {
  const scripts = scriptHashes.map((h) => `'${h}'`).join(" ");
  return [
    "default-src 'none'",
    `script-src ${scripts || "'none'"}`,
    "style-src 'unsafe-inline' data:",
    "img-src data:",
    "connect-src 'none'",
    "frame-src 'none'",
    "worker-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join("; ");
}

// isAllowedScript says whether the builder lets a script of the gadget's
// HTML run: inline classic or module JavaScript. A script with src, or of
// another type (an import map, data blocks), gets no hash, so the browser
// refuses it if it is code and ignores it if it is data.
function isAllowedScript(script) {
  if (script.namespaceURI !== "http://www.w3.org/1999/xhtml" || script.hasAttribute("src")) {
    return false;
  }
  const type = (script.getAttribute("type") ?? "").trim().toLowerCase();
  return type === "" || type === "text/javascript" || type === "module";
}

// forwardConsole runs in the frame (its source is one of the runtimes): it
// sends the gadget's console calls, uncaught errors and unhandled
// rejections to the shell over the MessagePort the shell posts as
// {gadgetd: "console"}, keeping the last 100 until that port arrives. It
// is a convenience, not a bound: the gadget's code can replace it or post
// on the port itself, so the shell bounds what it draws from the port
// (ConsolePanel in shell.js).
function forwardConsole() {
  const held = [];
  let port = null;
  const text = (v) => {
    if (v instanceof Error) {
      return v.stack || String(v);
    }
    if (typeof v === "string") {
      return v;
    }
    try {
      return JSON.stringify(v) ?? String(v);
    } catch {
      return String(v);
    }
  };
  const send = (level, args) => {
    const entry = { level, text: args.map(text).join(" ") };
    if (port) {
      port.postMessage(entry);
    } else if (held.push(entry) > 100) {
      held.shift();
    }
  };
  for (const level of ["debug", "log", "info", "warn", "error"]) {
    const original = console[level].bind(console);
    console[level] = (...args) => {
      send(level, args);
      original(...args);
    };
  }
  addEventListener("error", (ev) => send("error", [ev.error ?? ev.message]));
  addEventListener("unhandledrejection", (ev) => send("error", ["unhandled rejection:", ev.reason]));
  addEventListener("message", (ev) => {
    if (port || ev.source !== parent || ev.data?.gadgetd !== "console" || ev.ports.length !== 1) {
      return;
    }
    port = ev.ports[0];
    for (const entry of held.splice(0)) {
      port.postMessage(entry);
    }
  });
}

// CONSOLE_FORWARDER is forwardConsole's source, a runtime for frameDocument.
export const CONSOLE_FORWARDER = `(${forwardConsole})();\n`;

async function sha256Source(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  let binary = "";
  for (const b of new Uint8Array(digest)) {
    binary += String.fromCharCode(b);
  }
  return "sha256-" + btoa(binary);
}

// frameDocument turns a gadget's UI into the srcdoc of its frame: the
// policy first, then the shell's scripts (runtimes: the Cap'n Proto client,
// the console forwarder), then the gadget's own document, each allowed
// script prefixed with PRELUDE and given the shell's nonce. The gadget's
// HTML is parsed, never pasted, so no markup in it (an unclosed comment, a
// stray </head>, <plaintext>) can move the policy or the prelude.
//
// crypto.subtle needs a secure context: https, or http on loopback.
export async function frameDocument(gadgetHTML, { nonce, runtimes = [] }) {
  if (!globalThis.crypto?.subtle) {
    throw new Error("the gadget frame needs a secure context: serve gadgetd over https (or browse it on 127.0.0.1)");
  }
  const doc = new DOMParser().parseFromString(String(gadgetHTML), "text/html");
  const allowed = [...doc.querySelectorAll("script")].filter(isAllowedScript);
  const head = doc.head;
  const firstScripts = runtimes.map((source) => {
    const s = doc.createElement("script");
    s.textContent = source;
    return s;
  });
  head.prepend(...firstScripts);
  const hashes = [];
  for (const s of [...firstScripts, ...allowed]) {
    s.textContent = PRELUDE + s.textContent;
    s.setAttribute("nonce", nonce);
    hashes.push(await sha256Source(s.textContent));
  }
  const policy = doc.createElement("meta");
  policy.setAttribute("http-equiv", "Content-Security-Policy");
  policy.setAttribute("content", frameCSP([...new Set(hashes)]));
  const charset = doc.createElement("meta");
  charset.setAttribute("charset", "utf-8");
  head.prepend(charset, policy);
  return "<!doctype html>\n" + doc.documentElement.outerHTML;
}

// createFrame returns a sandboxed iframe (not yet in the document) showing
// the gadget's UI.
export async function createFrame(gadgetHTML, options) {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", SANDBOX);
  frame.srcdoc = await frameDocument(gadgetHTML, options);
  return frame;
}

// shellNonce is the nonce of the page the shell was served in (web/shell.go
// puts it in a meta element): the frame's scripts need it to pass the
// shell's policy, which their srcdoc documents inherit.
export function shellNonce() {
  const meta = document.querySelector('meta[name="gadgetd-nonce"]');
  if (!meta?.content) {
    throw new Error("the shell page has no nonce; it must be served by gadgetd");
  }
  return meta.content;
}

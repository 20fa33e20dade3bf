// The gadgetd shell: log in, list, create and remove gadgets, and open one
// in its sandboxed frame (sandbox.js), whose only channel is a MessagePort
// the shell relays to the gadget's own websocket (/ws/frame). The gadgets
// shared with the user are listed with who shared them; editors and owners
// share from the gadget's share dialog (sharing.js), and a share link is
// redeemed from the sidebar, or from the link itself (#redeem=…).
//
// State lives in this module, on the page's one thread: the connection to
// /ws with its workspace (made again on demand after it drops), and at most
// one open gadget, whose relay reconnects by itself. Every piece of text
// that comes from the server or a gadget reaches the DOM as text
// (textContent), never as markup.

import { connect, relay, release, schema } from "/static/gadgetd.js";
import { GatekeepersPanel } from "/shell/gatekeepers.js";
import { roleName, secretFrom, secretInFragment } from "/shell/links.js";
import { CONSOLE_FORWARDER, createFrame, shellNonce } from "/shell/sandbox.js";
import { ShareDialog } from "/shell/sharing.js";

const TOKEN_KEY = "gadgetd.token";
const CONSOLE_LINES = 500;
const LOG_LINES = 200;
// How many gadgets the shell asks the workspace's listing for at a time.
const LIST_PAGE = 500;
// Bounds on what a frame can make the shell draw (the frame is untrusted,
// and a buggy one logging in a loop must not freeze the shell either): each
// entry's text is cut to ENTRY_CHARS, and a frame's console gets
// CONSOLE_RATE entries a second with bursts of CONSOLE_BURST; the rest are
// counted, not drawn. The frame's console forwarder is no part of these
// bounds: the frame may replace it and post on its port directly.
const ENTRY_CHARS = 2000;
const CONSOLE_RATE = 50;
const CONSOLE_BURST = 200;
// The shell says how many entries it dropped at most once per DROP_NOTE_MS,
// so that its own lines do not become the flood.
const DROP_NOTE_MS = 1000;
const LEVELS = ["debug", "log", "info", "warn", "error"];
const RECONNECT_DELAYS_MS = [250, 1000, 2000, 5000, 10000];
// A frame connection that stayed up this long resets the pauses.
const STABLE_CONNECTION_MS = 10000;

// h makes an element: h("p", {class: "x", onclick: f}, "text", child…).
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) {
      el.addEventListener(k.slice(2), v);
    } else if (v !== false && v != null) {
      el.setAttribute(k, v === true ? "" : v);
    }
  }
  el.append(...children.filter((c) => c != null));
  return el;
}

const $ = (id) => document.getElementById(id);

function wsURL(path) {
  return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path;
}

// errorText is the server's reason for err, without the client's wrapping
// ("Error: ", and capnp-es's "CAPNP-TS116 RPC method failed at
// workspace.capnp:Gadget.share(): ").
function errorText(err) {
  return String(err?.message ?? err).replace(/^Error: /, "").replace(/^CAPNP-TS\d+ RPC method failed at \S+\(\): /, "");
}

// cutText bounds a text from a frame or the server to ENTRY_CHARS; a cut
// one says so. Anything but a string is shown as nothing.
function cutText(text) {
  if (typeof text !== "string") {
    return "";
  }
  if (text.length <= ENTRY_CHARS) {
    return text;
  }
  return `${text.slice(0, ENTRY_CHARS)}… (cut: ${text.length - ENTRY_CHARS} more characters)`;
}

// TokenBucket allows rate events a second, in bursts of up to burst.
class TokenBucket {
  constructor(rate, burst) {
    this.rate = rate;
    this.burst = burst;
    this.tokens = burst;
    this.last = performance.now();
  }

  take() {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) {
      return false;
    }
    this.tokens--;
    return true;
  }
}

// shellLine is a line of the shell's own in a panel of lines.
function shellLine(text) {
  return h("li", { class: "shell" }, h("span", { class: "origin" }, "gadgetd"), text);
}

// ConsolePanel draws a frame's console entries into list, within the
// bounds above: entries past the rate are dropped and counted, and the
// count shown as a line of the shell's own, at most once a second; what is let through waits
// for the next animation frame, which draws it all in one DOM update and
// one scroll, keeping the last CONSOLE_LINES lines. The shell's own lines
// (shellLine: class "shell", a "gadgetd" mark) are elements a frame's text,
// always set as text in an li of a level's class, can never make.
class ConsolePanel {
  constructor(list) {
    this.list = list;
    this.bucket = new TokenBucket(CONSOLE_RATE, CONSOLE_BURST);
    this.pending = [];
    this.dropped = 0;
    this.notedAt = -Infinity; // when the last "dropped" line was drawn
    this.noteTimer = null; // set while a "dropped" line waits its turn
    this.drawing = false;
  }

  // receive takes one message from the frame's console port. Past the
  // rate, it does not even read the message's data, so that a dropped
  // message costs the shell no copy of what the frame sent.
  receive(ev) {
    if (!this.bucket.take()) {
      this.dropped++;
    } else {
      const entry = ev.data;
      const level = LEVELS.includes(entry?.level) ? entry.level : "log";
      this.pending.push(h("li", { class: level }, h("span", { class: "level" }, level), cutText(entry?.text)));
      if (this.pending.length > CONSOLE_LINES) {
        this.pending.shift();
      }
    }
    this.schedule();
  }

  schedule() {
    if (!this.drawing) {
      this.drawing = true;
      requestAnimationFrame(() => this.draw());
    }
  }

  draw() {
    this.drawing = false;
    const now = performance.now();
    const sinceNote = now - this.notedAt;
    if (this.dropped > 0 && sinceNote >= DROP_NOTE_MS) {
      const n = this.dropped;
      this.dropped = 0;
      this.notedAt = now;
      this.pending.push(shellLine(`${n} console message${n === 1 ? "" : "s"} dropped: the gadget logs faster than ${CONSOLE_RATE} a second`));
    } else if (this.dropped > 0 && !this.noteTimer) {
      this.noteTimer = setTimeout(() => {
        this.noteTimer = null;
        this.schedule();
      }, DROP_NOTE_MS - sinceNote);
    }
    const lines = this.pending.splice(0);
    this.list.append(...lines);
    for (let extra = this.list.childElementCount - CONSOLE_LINES; extra > 0; extra--) {
      this.list.firstElementChild.remove();
    }
    this.list.scrollTop = this.list.scrollHeight;
  }

  clear() {
    this.pending = [];
    this.list.replaceChildren();
  }
}

// --- the token -----------------------------------------------------------

// takeTokenFromURL reads the token from a #token=… link (what `gadgetd
// serve --dev` prints) and strips it from the address bar and this history
// entry at once, so that it is neither bookmarked nor shown.
function takeTokenFromURL() {
  const m = /^#token=(.+)$/.exec(location.hash);
  if (!m) {
    return null;
  }
  history.replaceState(null, "", location.pathname + location.search);
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

// takeRedeemFromURL reads a share link's secret from a #redeem=… link
// (what the share dialog hands out) and strips it from the address bar, as
// takeTokenFromURL does the token. The shell offers to redeem it once the
// user is logged in, and does on their click: opening a link someone sent
// adds nothing to a workspace by itself.
function takeRedeemFromURL() {
  const secret = secretInFragment(location.hash);
  if (secret) {
    history.replaceState(null, "", location.pathname + location.search);
  }
  return secret;
}

// The token is kept for this tab only (sessionStorage), so that a reload
// does not log out and closing the tab does.
const storedToken = {
  get: () => sessionStorage.getItem(TOKEN_KEY),
  set: (t) => sessionStorage.setItem(TOKEN_KEY, t),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

// --- the connection --------------------------------------------------------

const state = {
  conn: null,
  workspace: null, // a Promise of the logged-in workspace
  user: null,
  gadgets: [], // GadgetInfo-like plain objects (gadgetInfo)
  blueprints: [],
  open: null, // the OpenGadget shown, if any
  redeem: null, // a #redeem=… secret to offer once logged in
};

// workspace returns the logged-in workspace, connecting and logging in
// again if the connection dropped.
function workspace() {
  if (!state.workspace) {
    state.workspace = (async () => {
      const conn = await connect(wsURL("/ws"));
      state.conn = conn;
      conn.closed.then(() => {
        if (state.conn === conn) {
          state.conn = null;
          state.workspace = null;
        }
      });
      try {
        const { workspace, user } = await conn.login(storedToken.get());
        state.user = user;
        return workspace;
      } catch (err) {
        conn.close();
        throw err;
      }
    })();
    state.workspace.catch(() => {
      state.workspace = null;
    });
  }
  return state.workspace;
}

// gadgetCap opens the gadget id afresh (pipelined): the shell keeps ids, not
// capabilities, so that a dropped connection leaves nothing stale.
async function gadgetCap(id) {
  const ws = await workspace();
  return ws.open((p) => { p.id = id; }).getGadget();
}

// --- the views -------------------------------------------------------------

function showLogin(message) {
  $("who").replaceChildren();
  const input = h("input", { type: "password", id: "token", name: "token", autocomplete: "current-password", required: true, placeholder: "token" });
  const form = h("form", { class: "login", onsubmit: (ev) => {
    ev.preventDefault();
    storedToken.set(input.value.trim());
    start();
  } },
  h("h1", {}, "Log in to gadgetd"),
  h("p", { class: "muted" }, "Paste a token (", h("code", {}, "gadgetd token new"), " prints one), or open the link ", h("code", {}, "gadgetd serve --dev"), " prints."),
  h("label", { for: "token" }, "Token"),
  input,
  state.redeem ? h("p", { class: "muted" }, "Log in to redeem the share link you opened.") : null,
  message ? h("p", { class: "error", role: "alert" }, message) : null,
  h("button", { type: "submit" }, "Log in"));
  $("main").replaceChildren(form);
  input.focus();
}

function logout() {
  closeGadget();
  storedToken.clear();
  state.conn?.close();
  state.conn = null;
  state.workspace = null;
  showLogin();
}

// isRefusedToken says whether a login failed because the server refused
// the token itself: its one answer to a bad token is "invalid token"
// (server/tokens.go). Only then does the shell forget the token.
function isRefusedToken(err) {
  return /\binvalid token\b/.test(errorText(err));
}

async function start() {
  if (!storedToken.get()) {
    showLogin();
    return;
  }
  $("main").replaceChildren(h("p", { class: "muted" }, "Connecting…"));
  try {
    await workspace();
  } catch (err) {
    if (isRefusedToken(err)) {
      storedToken.clear();
      showLogin(`Login failed: ${errorText(err)}`);
      return;
    }
    // The server is away, busy or the connection dropped, not the token
    // wrong: keep it, offer to retry.
    $("main").replaceChildren(h("div", { class: "login" },
      h("p", { class: "error", role: "alert" }, errorText(err)),
      h("button", { type: "button", onclick: start }, "Try again")));
    return;
  }
  $("who").replaceChildren(h("span", {}, state.user.name), h("button", { type: "button", class: "link", onclick: logout }, "Log out"));
  $("main").replaceChildren(
    h("nav", { class: "sidebar", "aria-label": "Gadgets" },
      h("header", { class: "list-head" },
        h("h2", {}, "Gadgets"),
        h("button", { type: "button", class: "link refresh", title: "List the gadgets again, with those shared with you since", onclick: () => refreshGadgets() }, "Refresh")),
      h("ul", { id: "gadget-list", class: "gadget-list" }),
      h("p", { id: "list-error", class: "error", role: "alert" }),
      h("form", { id: "create", class: "create", onsubmit: createGadget },
        h("h3", {}, "New gadget"),
        h("label", { for: "create-blueprint" }, "Blueprint"),
        h("select", { id: "create-blueprint", name: "blueprint", required: true }),
        h("label", { for: "create-name" }, "Name"),
        h("input", { id: "create-name", name: "name", placeholder: "optional" }),
        h("button", { type: "submit" }, "Create"),
        h("p", { id: "create-error", class: "error", role: "alert" })),
      h("form", { id: "redeem", class: "redeem", onsubmit: redeemLink },
        h("h3", {}, "Redeem a share link"),
        h("label", { for: "redeem-secret" }, "Link or secret"),
        h("input", { id: "redeem-secret", name: "secret", required: true, autocomplete: "off", placeholder: "gdl_…", value: state.redeem ?? "" }),
        state.redeem ? h("p", { class: "muted", id: "redeem-offer" }, "You opened a share link: redeem it to add its gadget to your gadgets.") : null,
        h("button", { type: "submit" }, "Redeem"),
        h("p", { id: "redeem-error", class: "error", role: "alert" }))),
    h("section", { id: "gadget", class: "gadget" },
      h("p", { class: "muted empty" }, "Open a gadget, or create one.")));
  if (state.redeem) {
    state.redeem = null;
    $("redeem-secret").focus();
  }
  await Promise.all([refreshGadgets(), refreshBlueprints()]);
}

async function refreshBlueprints() {
  const ws = await workspace();
  const res = await ws.blueprints().promise();
  state.blueprints = res.blueprints.map((b) => ({ name: b.name, version: b.version, description: b.description }));
  $("create-blueprint")?.replaceChildren(...state.blueprints.map((b) =>
    h("option", { value: b.name, title: b.description }, `${b.name} ${b.version}`)));
}

// gadgetInfo is what the shell keeps of a GadgetInfo. The share dialog
// asks the gadget itself for what its blueprint version declares.
function gadgetInfo(info) {
  return { id: info.id, name: info.name, blueprint: info.blueprint, role: info.role, sharedBy: info.sharedBy };
}

// whose says whose a listed gadget is: "yours", or who shared it with the
// user and at which role.
function whose(g) {
  return g.sharedBy ? `shared by ${g.sharedBy} · ${roleName(g.role)}` : "yours";
}

// listGadgets reads the workspace's listing page by page (the server
// answers at most 1000 gadgets at a time) and keeps what the shell shows of
// each. The shell keeps ids: it lets go of each page's capabilities once
// read, as each counts against the connection's bound.
async function listGadgets(ws) {
  const gadgets = [];
  let after = "";
  do {
    const res = await ws.gadgets((p) => {
      p.after = after;
      p.limit = LIST_PAGE;
    }).promise();
    gadgets.push(...res.gadgets.map((g) => gadgetInfo(g.info)));
    after = res.next;
    await Promise.all(res.gadgets.map((g) => release(g.gadget)));
  } while (after);
  return gadgets;
}

async function refreshGadgets() {
  const err = $("list-error");
  try {
    state.gadgets = await listGadgets(await workspace());
    if (err) {
      err.textContent = "";
    }
    // The open gadget is gone from the list (unshared, its link revoked,
    // removed): its calls fail already; say why and let go of it.
    const open = state.open;
    if (open && !state.gadgets.some((g) => g.id === open.id)) {
      closeGadget();
      $("gadget")?.replaceChildren(h("p", { class: "muted empty gone" }, `${open.info.name || open.id} is no longer among your gadgets: your share or link to it was revoked, or it was removed.`));
    }
  } catch (e) {
    if (err) {
      err.textContent = `gadgets: ${errorText(e)}`;
    }
  }
  renderGadgetList();
}

function renderGadgetList() {
  const list = $("gadget-list");
  if (!list) {
    return;
  }
  if (state.gadgets.length === 0) {
    list.replaceChildren(h("li", { class: "muted" }, "None yet."));
    return;
  }
  list.replaceChildren(...state.gadgets.map((g) =>
    h("li", { "data-id": g.id, class: state.open?.id === g.id ? "current" : null },
      h("button", { type: "button", class: "open", onclick: () => openGadget(g) },
        h("span", { class: "name" }, g.name || g.id),
        h("span", { class: "blueprint" }, g.blueprint),
        h("span", { class: g.sharedBy ? "whose shared" : "whose" }, whose(g))))));
}

async function createGadget(ev) {
  ev.preventDefault();
  const form = ev.target;
  const err = $("create-error");
  err.textContent = "";
  try {
    const ws = await workspace();
    const res = await ws.create((p) => {
      p.blueprint = form.blueprint.value;
      p.name = form.name.value.trim();
    }).promise();
    const info = gadgetInfo(res.info);
    await release(res.gadget);
    form.name.value = "";
    await refreshGadgets();
    openGadget(info);
  } catch (e) {
    err.textContent = errorText(e);
  }
}

// redeemLink redeems the share link (or its bare secret) in the redeem
// form, and opens the gadget it leads to.
async function redeemLink(ev) {
  ev.preventDefault();
  const form = ev.target;
  const err = $("redeem-error");
  err.textContent = "";
  try {
    const ws = await workspace();
    const res = await ws.redeem((p) => { p.secret = secretFrom(form.secret.value); }).promise();
    const info = gadgetInfo(res.info);
    await release(res.gadget);
    form.secret.value = "";
    $("redeem-offer")?.remove();
    await refreshGadgets();
    openGadget(info);
  } catch (e) {
    err.textContent = errorText(e);
  }
}

// removeGadget asks first: the first click arms the button, a second one
// within a few seconds removes the gadget and its data.
async function removeGadget(g, button) {
  if (button.dataset.armed !== "yes") {
    button.dataset.armed = "yes";
    button.textContent = "Remove it and its data?";
    setTimeout(() => {
      button.dataset.armed = "";
      button.textContent = "Remove";
    }, 5000);
    return;
  }
  try {
    const gadget = await gadgetCap(g.id);
    await gadget.remove().promise();
    await release(gadget);
    if (state.open?.id === g.id) {
      closeGadget();
      $("gadget").replaceChildren(h("p", { class: "muted empty" }, "Removed."));
    }
  } catch (e) {
    state.open?.status(`remove failed: ${errorText(e)}`, "error");
  }
  await refreshGadgets();
}

// --- an open gadget --------------------------------------------------------

function closeGadget() {
  state.open?.close();
  state.open = null;
}

async function openGadget(g) {
  closeGadget();
  const open = new OpenGadget(g);
  state.open = open;
  renderGadgetList();
  await open.start();
}

// frameRuntime is the iframe's Cap'n Proto runtime (web/static/frame.js), a
// classic script the frame builder inlines.
let frameRuntime = null;
function loadFrameRuntime() {
  frameRuntime ??= fetch("/static/frame.js").then((r) => {
    if (!r.ok) {
      throw new Error(`/static/frame.js: ${r.status}`);
    }
    return r.text();
  });
  return frameRuntime;
}

// OpenGadget is one gadget on screen: its frame, its relay to /ws/frame
// (reconnected with a fresh ticket, socket and port whenever it drops,
// while the frame and its state stay), its console, its logs and its
// gatekeepers (gatekeepers.js).
class OpenGadget {
  constructor(g) {
    this.id = g.id;
    this.info = g;
    this.closed = false;
    this.attempt = 0;
    this.socket = null;
    this.frame = null;
    this.console = null; // its ConsolePanel, once the view is drawn
    this.consolePort = null; // the shell's end of the frame's console channel
  }

  status(text, kind = "") {
    const el = this.view?.querySelector(".status");
    if (el) {
      el.textContent = text;
      el.dataset.kind = kind;
    }
  }

  async start() {
    const g = this.info;
    // Editors and owners may share; a viewer gets no dialog (the server
    // would refuse every call in it).
    this.sharing = g.role >= schema.gadget.Role.EDITOR
      ? new ShareDialog({ g, gadgetCap, h, errorText, cutText })
      : null;
    this.view = h("article", { class: "open-gadget", "data-id": g.id },
      h("header", { class: "gadget-head" },
        h("h2", {}, g.name || g.id),
        h("span", { class: "blueprint" }, g.blueprint),
        h("span", { class: g.sharedBy ? "whose shared" : "whose" }, whose(g)),
        h("span", { class: "status", role: "status" }, "opening…"),
        this.sharing ? h("button", { type: "button", class: "share-open", onclick: () => this.sharing.open() }, "Share") : null,
        // Only its creator may remove a gadget: not one shared with you.
        g.sharedBy ? null : h("button", { type: "button", class: "danger remove", onclick: (ev) => removeGadget(g, ev.currentTarget) }, "Remove")),
      h("div", { class: "frame-box" }),
      h("div", { class: "panels" },
        h("section", { class: "panel", "aria-label": "Console" },
          h("header", {}, h("h3", {}, "Console"), h("button", { type: "button", class: "link", onclick: () => this.console.clear() }, "Clear")),
          h("ol", { class: "console lines" })),
        h("section", { class: "panel", "aria-label": "Logs" },
          h("header", {}, h("h3", {}, "Logs"), h("button", { type: "button", class: "link", onclick: () => this.refreshLogs() }, "Refresh")),
          h("ol", { class: "logs lines" })),
        // What the gadget may reach outside its sandbox, the actions it
        // asked for that wait for the user, and its audit log.
        h("section", { class: "panel gatekeepers", "aria-label": "Gatekeepers" },
          h("header", {}, h("h3", {}, "Gatekeepers")),
          h("div", { class: "gatekeepers-body" }))),
      this.sharing?.el);
    this.console = new ConsolePanel(this.view.querySelector(".console"));
    this.gatekeepers = new GatekeepersPanel(this.view.querySelector(".gatekeepers-body"), {
      id: this.id, blueprint: g.blueprint, workspace, gadgetCap, h, errorText, cutText,
    });
    this.gatekeepers.start();
    $("gadget").replaceChildren(this.view);
    try {
      const gadget = await gadgetCap(this.id);
      const [{ html }, runtime] = await Promise.all([gadget.ui().promise(), loadFrameRuntime()]);
      await release(gadget);
      if (this.closed) {
        return;
      }
      this.frame = await createFrame(html, { nonce: shellNonce(), runtimes: [CONSOLE_FORWARDER, runtime] });
      this.frame.title = `${g.name || g.id} (${g.blueprint})`;
      this.frame.addEventListener("load", () => this.frameLoaded(), { once: true });
      this.view.querySelector(".frame-box").append(this.frame);
    } catch (e) {
      this.status(`cannot open: ${errorText(e)}`, "error");
    }
    this.refreshLogs();
  }

  frameLoaded() {
    const consoleChannel = new MessageChannel();
    this.consolePort = consoleChannel.port1;
    this.consolePort.onmessage = (ev) => this.console.receive(ev);
    this.frame.contentWindow.postMessage({ gadgetd: "console" }, "*", [consoleChannel.port2]);
    this.connect();
  }

  // connect gets a frame ticket, opens /ws/frame with it, and hands the
  // frame a fresh port relayed to that socket. When the socket drops, it
  // does it all again after a pause that grows with each failure.
  async connect() {
    if (this.closed) {
      return;
    }
    this.status(this.attempt === 0 ? "connecting…" : "reconnecting…", "busy");
    let ws;
    try {
      const gadget = await gadgetCap(this.id);
      const { ticket } = await gadget.frameTicket().promise();
      await release(gadget);
      ws = new WebSocket(wsURL("/ws/frame?ticket=" + encodeURIComponent(ticket)));
    } catch (e) {
      this.retry(errorText(e));
      return;
    }
    if (this.closed) {
      ws.close();
      return;
    }
    this.socket = ws;
    const channel = new MessageChannel();
    relay(channel.port1, ws);
    let openedAt = 0;
    ws.addEventListener("open", () => {
      openedAt = Date.now();
      this.status("connected", "ok");
    });
    ws.addEventListener("close", (ev) => {
      if (this.socket === ws && !this.closed) {
        this.socket = null;
        // Only a connection that lasted starts the pauses over: a frame
        // that gets its socket closed at once (by sending the server
        // garbage, say) must not make the shell reconnect four times a
        // second for good.
        if (openedAt && Date.now() - openedAt >= STABLE_CONNECTION_MS) {
          this.attempt = 0;
        }
        this.retry(ev.reason || `the socket closed (${ev.code})`);
      }
    });
    this.frame.contentWindow.postMessage({ gadgetd: "port" }, "*", [channel.port2]);
  }

  retry(reason) {
    const delay = RECONNECT_DELAYS_MS[Math.min(this.attempt, RECONNECT_DELAYS_MS.length - 1)];
    this.attempt++;
    console.warn(`gadgetd: gadget ${this.id}: ${reason}; reconnecting in ${delay} ms`);
    this.status(`disconnected (${reason}); reconnecting…`, "busy");
    setTimeout(() => this.connect(), delay);
  }

  async refreshLogs() {
    const list = this.view.querySelector(".logs");
    try {
      const gadget = await gadgetCap(this.id);
      const res = await gadget.logs((p) => { p.limit = LOG_LINES; }).promise();
      const levels = Object.fromEntries(Object.entries(schema.gadget.LogLevel).map(([k, v]) => [v, k.toLowerCase()]));
      // The server sends at most LOG_LINES lines of bounded size; the
      // shell holds the gadget's text to its own bounds all the same.
      const lines = [];
      for (let i = Math.max(0, res.lines.length - LOG_LINES); i < res.lines.length; i++) {
        const l = res.lines.get(i);
        const level = levels[l.level] ?? "info";
        const time = new Date(Number(l.time)).toLocaleTimeString();
        lines.push(h("li", { class: level }, h("time", {}, time), h("span", { class: "level" }, level), cutText(l.text)));
      }
      await release(gadget);
      list.replaceChildren(...(lines.length ? lines : [h("li", { class: "muted" }, "No log lines.")]));
    } catch (e) {
      list.replaceChildren(h("li", { class: "error" }, `logs: ${errorText(e)}`));
    }
  }

  close() {
    this.closed = true;
    this.gatekeepers?.close();
    this.socket?.close();
    this.consolePort?.close();
    this.view?.remove();
  }
}

// --- start -----------------------------------------------------------------

const fromURL = takeTokenFromURL();
if (fromURL) {
  storedToken.set(fromURL);
}
state.redeem = takeRedeemFromURL();
start();

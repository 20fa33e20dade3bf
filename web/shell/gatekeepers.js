// The gatekeepers panel of an open gadget: what the gadget may reach
// (its bindings, with a form to bind another and a button to unbind), the
// actions it asked for that wait for the user's decision (approve or
// reject), and the gadget's part of the audit log.
//
// It hears about actions as they are queued and decided through a listener
// of its own (Workspace.watchActions), implemented here in JS, and redraws
// the panel when one arrives, at most once per animation frame. Everything
// it draws from the server reaches the DOM as text.

import { release, schema } from "/static/gadgetd.js";

const AUDIT_LINES = 20;
const RESOURCE_HINTS = { github: "owner/repository", http: "https://api.example.com/v1/" };

export class GatekeepersPanel {
  // el is the panel's element; workspace() and gadgetCap() are the shell's
  // (the logged-in workspace, and the gadget's capability, each afresh);
  // h draws an element; errorText and cutText are the shell's.
  constructor(el, { id, blueprint, workspace, gadgetCap, h, errorText, cutText }) {
    Object.assign(this, { el, id, blueprint, workspace, gadgetCap, h, errorText, cutText });
    this.closed = false;
    this.fixed = null; // see fixedParts
    this.subscription = null;
    this.redrawing = false;
  }

  async start() {
    this.draw();
    await this.watch();
  }

  close() {
    this.closed = true;
    const s = this.subscription;
    this.subscription = null;
    if (s) {
      release(s).catch(() => {});
    }
  }

  // watch subscribes to the workspace's actions; each change redraws.
  async watch() {
    try {
      const ws = await this.workspace();
      const listener = new schema.workspace.ActionListener.Server({
        changed: () => this.draw(),
        missed: () => this.draw(),
      }).client();
      const res = await ws.watchActions((p) => { p.listener = listener; }).promise();
      if (this.closed) {
        release(res.subscription).catch(() => {});
        return;
      }
      this.subscription = res.subscription;
    } catch {
      // Without live updates the panel still redraws after each of its own
      // requests.
    }
  }

  // fixedParts is what cannot change while the panel is open (the
  // configured services, the bindings the blueprint asks for): asked once,
  // and again only if asking failed, not on every redraw.
  fixedParts() {
    this.fixed ??= this.workspace().then(async (ws) => {
      const [services, blueprints] = await Promise.all([ws.services().promise(), ws.blueprints().promise()]);
      const requested = [...blueprints.blueprints].find((b) => b.name === this.blueprint)?.bindings ?? [];
      return { services: [...services.services], requested: [...requested] };
    });
    this.fixed.catch(() => { this.fixed = null; });
    return this.fixed;
  }

  draw() {
    if (this.redrawing || this.closed) {
      return;
    }
    this.redrawing = true;
    requestAnimationFrame(async () => {
      try {
        await this.render();
      } finally {
        this.redrawing = false;
      }
    });
  }

  async render() {
    const h = this.h;
    let parts;
    try {
      const ws = await this.workspace();
      const gadget = await this.gadgetCap(this.id);
      const [fixed, bindings, pending, audit] = await Promise.all([
        this.fixedParts(),
        gadget.bindings().promise(),
        ws.actions((p) => {
          const f = p._initFilter();
          f.gadget = this.id;
          const states = f._initStates(2);
          states.set(0, schema.workspace.ActionState.PENDING);
          states.set(1, schema.workspace.ActionState.IN_DOUBT);
        }).promise(),
        ws.audit((p) => {
          const f = p._initFilter();
          f.gadget = this.id;
          f.limit = AUDIT_LINES;
        }).promise(),
      ]);
      await release(gadget);
      parts = [
        this.renderBindings([...bindings.bindings], fixed.services, fixed.requested),
        this.renderPending([...pending.actions]),
        this.renderAudit([...audit.entries]),
      ];
    } catch (e) {
      parts = [h("p", { class: "error" }, `gatekeepers: ${this.errorText(e)}`)];
    }
    if (!this.closed) {
      this.el.replaceChildren(...parts);
    }
  }

  renderBindings(bindings, services, requested) {
    const h = this.h;
    const bound = new Set(bindings.map((b) => b.name));
    const rows = bindings.map((b) =>
      h("li", { class: "binding", "data-name": b.name },
        h("span", { class: "name" }, b.name),
        h("span", { class: "resource" }, `${b.kind} ${this.cutText(b.resource)}`),
        h("button", { type: "button", class: "link unbind", onclick: () => this.unbind(b.name) }, "Unbind")));
    const wanted = requested.find((r) => !bound.has(r.name));
    const form = services.length === 0
      ? h("p", { class: "muted" }, "No services are configured on this server.")
      : this.bindForm(services, wanted);
    const asks = requested.filter((r) => !bound.has(r.name)).map((r) =>
      h("li", { class: "muted request" }, `${r.name} (${r.kind}): ${this.cutText(r.why)}`));
    return h("section", { class: "bindings" },
      h("h4", {}, "Bindings"),
      h("ul", { class: "lines" }, ...(rows.length ? rows : [h("li", { class: "muted" }, "None: this gadget reaches nothing outside its sandbox.")])),
      asks.length ? h("ul", { class: "lines requests", "aria-label": "Asked for" }, ...asks) : null,
      form);
  }

  bindForm(services, wanted) {
    const h = this.h;
    const service = services.find((s) => s.kind === wanted?.kind) ?? services[0];
    const form = h("form", { class: "bind", onsubmit: (ev) => this.bind(ev) },
      h("input", { name: "name", "aria-label": "Name", placeholder: "name", required: true, value: wanted?.name ?? "" }),
      h("select", { name: "service", "aria-label": "Service" },
        ...services.map((s) => h("option", { value: s.name, selected: s === service, title: s.description }, `${s.name} (${s.kind})`))),
      h("input", { name: "resource", "aria-label": "Resource", required: true, placeholder: RESOURCE_HINTS[service.kind] ?? "resource" }),
      h("button", { type: "submit" }, "Bind"),
      h("p", { class: "error", role: "alert" }));
    return form;
  }

  async bind(ev) {
    ev.preventDefault();
    const form = ev.target;
    const err = form.querySelector(".error");
    err.textContent = "";
    try {
      const gadget = await this.gadgetCap(this.id);
      await gadget.bind((p) => {
        p.name = form.name.value.trim();
        p.service = form.service.value;
        p.resource = form.resource.value.trim();
      }).promise();
      await release(gadget);
      this.draw();
    } catch (e) {
      err.textContent = this.errorText(e);
    }
  }

  async unbind(name) {
    try {
      const gadget = await this.gadgetCap(this.id);
      await gadget.unbind((p) => { p.name = name; }).promise();
      await release(gadget);
    } finally {
      this.draw();
    }
  }

  renderPending(actions) {
    const h = this.h;
    const inDoubt = schema.workspace.ActionState.IN_DOUBT;
    // Each shows everything it will do (its details: the whole text of an
    // issue, a request's body), not only its one-line description.
    const rows = actions.map((a) =>
      h("li", { class: "action", "data-id": a.id },
        h("span", { class: "what" }, this.cutText(a.description),
          a.details ? h("pre", { class: "details" }, this.cutText(a.details)) : null),
        h("span", { class: "muted user" }, `by ${whose(a)}`),
        a.state === inDoubt ? h("span", { class: "doubt", title: "The server stopped while applying it; approve to try again" }, "in doubt") : null,
        h("button", { type: "button", class: "approve", onclick: () => this.decide([a.id], true) }, a.state === inDoubt ? "Retry" : "Approve"),
        h("button", { type: "button", class: "reject danger", onclick: () => this.decide([a.id], false) }, "Reject")));
    const all = actions.length > 1
      ? h("button", { type: "button", class: "link approve-all", onclick: () => this.decide(actions.map((a) => a.id), true) }, `Approve all ${actions.length}`)
      : null;
    return h("section", { class: "pending" },
      h("h4", {}, "Waiting for you"), all,
      h("ul", { class: "lines" }, ...(rows.length ? rows : [h("li", { class: "muted" }, "No actions wait.")])));
  }

  async decide(ids, approve) {
    try {
      const ws = await this.workspace();
      await ws.decide((p) => {
        p.approve = approve;
        const list = p._initIds(ids.length);
        ids.forEach((id, i) => list.set(i, id));
      }).promise();
    } finally {
      this.draw();
    }
  }

  renderAudit(entries) {
    const h = this.h;
    const rows = entries.map((e) =>
      h("li", { class: e.failed ? "error" : e.action ? "action" : "read" },
        h("time", {}, new Date(Number(e.time)).toLocaleTimeString()),
        h("span", { class: "level" }, e.action ? "action" : "read"),
        h("span", { class: "user" }, whose(e)),
        `${this.cutText(e.description)}: ${this.cutText(e.outcome)}`));
    return h("section", { class: "audit" },
      h("h4", {}, "Audit log"),
      h("ol", { class: "lines" }, ...(rows.length ? rows : [h("li", { class: "muted" }, "No calls yet.")])));
  }
}

// whose names the user whose session made a call or queued an action: by
// login name, or by the recorded id where it names no user (an outcome's
// approver, "auto").
function whose(e) {
  return e.userName || e.user;
}

// The share dialog of an open gadget, for its editors and owners: share it
// with a user at a role up to one's own, see who holds it and unshare, and
// make, list and revoke share links. A new link's secret is shown once, in
// the dialog that made it: the server keeps only a keyed hash of it.
//
// Everything here, and the blueprint's own permissions when it declares
// them, comes from the server and from other users (their names, the
// labels of their links), so it reaches the DOM as text, never as markup.
// Each failure is shown, as the server worded it, next to what failed.

import { release, schema } from "/static/gadgetd.js";
import { EXPIRY_CHOICES, linkTerms, linkURL, roleName, rolePermissions, rolesUpTo } from "/shell/links.js";

export class ShareDialog {
  // g is the shell's record of the open gadget's GadgetInfo; gadgetCap()
  // is the shell's; h draws an element; errorText and cutText are the
  // shell's.
  constructor({ g, gadgetCap, h, errorText, cutText }) {
    Object.assign(this, { g, gadgetCap, h, errorText, cutText });
    const roles = rolesUpTo(g.role);
    const roleSelect = (name, label) => h("select", { name, "aria-label": label },
      ...roles.map((r) => h("option", { value: r.value, selected: r.value === schema.gadget.Role.VIEWER }, r.name)));
    this.sharesList = h("ul", { class: "lines shares" });
    this.linksList = h("ul", { class: "lines links" });
    this.secretBox = h("div", { class: "secret-box" });
    this.rolesNote = h("div", { class: "roles-note" });
    this.el = h("dialog", { class: "share-dialog", "aria-label": "Share" },
      h("header", {},
        h("h2", {}, "Share ", h("span", { class: "name" }, g.name || g.id)),
        h("button", { type: "button", class: "link close", onclick: () => this.close() }, "Close")),
      this.rolesNote,
      h("section", { class: "share-with" },
        h("h3", {}, "Share with a user"),
        h("form", { class: "share", onsubmit: (ev) => this.share(ev) },
          h("input", { name: "user", "aria-label": "User name", placeholder: "user name", required: true, autocomplete: "off" }),
          roleSelect("role", "Role"),
          h("button", { type: "submit" }, "Share"),
          h("p", { class: "error", role: "alert" })),
        h("h3", {}, "Shared with"),
        this.sharesList),
      h("section", { class: "share-links" },
        h("h3", {}, "Share links"),
        h("form", { class: "create-link", onsubmit: (ev) => this.createLink(ev) },
          roleSelect("role", "Link role"),
          h("select", { name: "expiry", "aria-label": "Expires" },
            ...EXPIRY_CHOICES.map((c, i) => h("option", { value: String(i), selected: c.default === true }, c.name))),
          h("label", { class: "check" }, h("input", { type: "checkbox", name: "singleUse" }), "single use"),
          h("input", { name: "label", "aria-label": "Label", placeholder: "label (who it is for)", maxlength: 200 }),
          h("button", { type: "submit" }, "Create link"),
          h("p", { class: "error", role: "alert" })),
        this.secretBox,
        this.linksList));
    // Escape closes a modal dialog without our close(): forget the secret
    // then too.
    this.el.addEventListener("close", () => this.secretBox.replaceChildren());
  }

  open() {
    if (!this.el.open) {
      this.el.showModal();
    }
    this.refresh();
    this.describeRoles();
  }

  close() {
    this.el.close();
  }

  refresh() {
    this.refreshShares();
    this.refreshLinks();
  }

  // describeRoles says what each role may do in this gadget, when the
  // blueprint version it runs declares its own permissions (Gadget.info's
  // GadgetInfo, whichever versions the user has installed; the workspace's
  // listing leaves them out).
  async describeRoles() {
    const h = this.h;
    let held;
    try {
      const { info } = await this.call((gadget) => gadget.info().promise());
      held = rolePermissions(
        [...info.permissions].map((p) => ({ name: p.name, title: p.title })),
        [...info.roles].map((r) => ({ role: r.role, permissions: [...r.permissions] })));
    } catch (e) {
      this.rolesNote.replaceChildren(h("p", { class: "error", role: "alert" }, `roles: ${this.errorText(e)}`));
      return;
    }
    this.rolesNote.replaceChildren(...(held.length === 0 ? [] : [
      h("p", { class: "muted" }, "What each role may do in this gadget:"),
      h("ul", { class: "role-permissions" }, ...held.map((r) =>
        h("li", { "data-role": r.role }, h("strong", {}, r.role), ": ",
          this.cutText(r.permissions.join(", ") || "nothing of its own"))))]));
  }

  // call runs fn on the gadget's capability, released after.
  async call(fn) {
    const gadget = await this.gadgetCap(this.g.id);
    try {
      return await fn(gadget);
    } finally {
      await release(gadget);
    }
  }

  async refreshShares() {
    const h = this.h;
    try {
      const res = await this.call((gadget) => gadget.shares().promise());
      const rows = [...res.shares].map((s) =>
        h("li", { class: "share-row", "data-user": s.user },
          h("span", { class: "user" }, s.user),
          h("span", { class: "role" }, roleName(s.role)),
          h("span", { class: "muted by" }, `from ${s.sharedBy}`),
          h("button", { type: "button", class: "link unshare", onclick: (ev) => this.unshare(s.user, ev.currentTarget) }, "Unshare")));
      this.sharesList.replaceChildren(...(rows.length ? rows : [h("li", { class: "muted" }, "Nobody else yet.")]));
    } catch (e) {
      this.sharesList.replaceChildren(h("li", { class: "error" }, `shares: ${this.errorText(e)}`));
    }
  }

  async refreshLinks() {
    const h = this.h;
    try {
      const res = await this.call((gadget) => gadget.links().promise());
      const rows = [...res.links].map((l) =>
        h("li", { class: "link-row", "data-id": l.id },
          h("span", { class: "label" }, this.cutText(l.label) || "(no label)"),
          h("span", { class: "role" }, roleName(l.role)),
          h("span", { class: "muted terms" }, linkTerms({
            createdBy: l.createdBy, expiresAt: Number(l.expiresAt), singleUse: l.singleUse,
            consumed: l.consumed, redemptions: l.redemptions,
          }, Date.now())),
          h("button", { type: "button", class: "link revoke", onclick: (ev) => this.revokeLink(l.id, ev.currentTarget) }, "Revoke")));
      this.linksList.replaceChildren(...(rows.length ? rows : [h("li", { class: "muted" }, "No links.")]));
    } catch (e) {
      this.linksList.replaceChildren(h("li", { class: "error" }, `links: ${this.errorText(e)}`));
    }
  }

  async share(ev) {
    ev.preventDefault();
    const form = ev.target;
    const err = form.querySelector(".error");
    err.textContent = "";
    try {
      await this.call((gadget) => gadget.share((p) => {
        p.user = form.user.value.trim();
        p.role = Number(form.role.value);
      }).promise());
      form.user.value = "";
    } catch (e) {
      err.textContent = this.errorText(e);
    }
    this.refreshShares();
  }

  // unshare and revokeLink show a failure in place of the button's row.
  async unshare(user, button) {
    button.disabled = true;
    try {
      await this.call((gadget) => gadget.unshare((p) => { p.user = user; }).promise());
      this.refresh(); // links redeemed below that share may have ended too
    } catch (e) {
      button.replaceWith(this.h("span", { class: "error" }, this.errorText(e)));
    }
  }

  async revokeLink(id, button) {
    button.disabled = true;
    try {
      await this.call((gadget) => gadget.revokeLink((p) => { p.id = id; }).promise());
      this.refresh();
    } catch (e) {
      button.replaceWith(this.h("span", { class: "error" }, this.errorText(e)));
    }
  }

  async createLink(ev) {
    ev.preventDefault();
    const h = this.h;
    const form = ev.target;
    const err = form.querySelector(".error");
    err.textContent = "";
    this.secretBox.replaceChildren();
    try {
      const expiry = EXPIRY_CHOICES[Number(form.expiry.value)] ?? EXPIRY_CHOICES[0];
      const res = await this.call((gadget) => gadget.createLink((p) => {
        p.role = Number(form.role.value);
        p.expiresInSeconds = BigInt(expiry.seconds);
        p.singleUse = form.singleUse.checked;
        p.label = form.label.value.trim();
      }).promise());
      const secret = res.secret;
      const url = linkURL(location.origin, secret);
      const field = h("input", { class: "link-url", readonly: true, value: url, "aria-label": "Link", onfocus: (e) => e.target.select() });
      const note = h("span", { class: "muted copied", role: "status" });
      this.secretBox.replaceChildren(
        h("p", {}, "The link, shown only now (the server keeps a hash of it): send it to whom it is for."),
        h("div", { class: "copy-row" }, field,
          h("button", { type: "button", class: "copy", onclick: () => copy(field, note) }, "Copy")),
        note,
        h("p", { class: "muted" }, "Or the secret alone, for ", h("code", {}, "gadgetd redeem"), ": ",
          h("code", { class: "secret" }, secret)));
      form.label.value = "";
    } catch (e) {
      err.textContent = this.errorText(e);
    }
    this.refreshLinks();
  }
}

// copy puts field's text on the clipboard; where the browser refuses (no
// permission, a page not in a secure context), it selects the text for
// the user to copy, and says so.
async function copy(field, note) {
  try {
    await navigator.clipboard.writeText(field.value);
    note.textContent = "Copied.";
  } catch {
    field.focus();
    field.select();
    note.textContent = "Selected: copy it with Ctrl+C (⌘C).";
  }
}

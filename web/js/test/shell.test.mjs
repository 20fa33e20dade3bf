// The shell's sharing helpers (web/shell/links.js): what they make of what
// a user pastes, the roles one may give, and a link's terms in words.

import assert from "node:assert/strict";
import { test } from "node:test";
import { EXPIRY_CHOICES, linkTerms, linkURL, roleName, rolePermissions, rolesUpTo, secretFrom, secretInFragment } from "../../shell/links.js";

const SECRET = "gdl_eZIUB3FbiqsP-mGHpOANXQ";

test("a link's address gives back its secret, pasted or opened", () => {
  const url = linkURL("http://127.0.0.1:8080", SECRET);
  assert.equal(url, `http://127.0.0.1:8080/#redeem=${SECRET}`);
  assert.equal(secretFrom(url), SECRET);
  assert.equal(secretFrom(`  ${url}\n`), SECRET);
  assert.equal(secretInFragment(new URL(url).hash), SECRET);
});

test("a bare secret, or anything else pasted, passes through for the server to judge", () => {
  assert.equal(secretFrom(` ${SECRET} `), SECRET);
  assert.equal(secretFrom("not a link"), "not a link");
  assert.equal(secretFrom("#redeem=%E0%A4%A"), "%E0%A4%A"); // bad escapes stay as they are
});

test("only a #redeem= fragment with a secret offers redeeming", () => {
  assert.equal(secretInFragment(""), null);
  assert.equal(secretInFragment("#redeem="), null);
  assert.equal(secretInFragment("#token=t"), null);
  assert.equal(secretInFragment(`#x#redeem=${SECRET}`), null);
});

test("one may give roles up to one's own, and no role above owner exists", () => {
  assert.deepEqual(rolesUpTo(0).map((r) => r.name), ["viewer"]);
  assert.deepEqual(rolesUpTo(1), [{ name: "viewer", value: 0 }, { name: "editor", value: 1 }]);
  assert.deepEqual(rolesUpTo(2).map((r) => r.name), ["viewer", "editor", "owner"]);
  assert.deepEqual(rolesUpTo(7).map((r) => r.name), ["viewer", "editor", "owner"]);
  assert.deepEqual(rolesUpTo(undefined).map((r) => r.name), ["viewer"]);
  assert.equal(roleName(1), "editor");
  assert.equal(roleName(9), "role 9");
});

test("a link's terms say who made it and what is left of it", () => {
  const now = Date.UTC(2026, 11, 2);
  const base = { createdBy: "alice", expiresAt: 0, singleUse: false, consumed: false, redemptions: 0 };
  assert.equal(linkTerms(base, now), "by alice · 0 redeemed");
  assert.equal(linkTerms({ ...base, singleUse: true }, now), "by alice · single use · 0 redeemed");
  assert.equal(linkTerms({ ...base, singleUse: true, consumed: true, redemptions: 1 }, now), "by alice · used · 1 redeemed");
  assert.equal(linkTerms({ ...base, expiresAt: now }, now), "by alice · expired · 0 redeemed");
  assert.match(linkTerms({ ...base, expiresAt: now + 1000 }, now), /^by alice · until .+ · 0 redeemed$/);
});

test("exactly one expiry is the default, and never is a choice", () => {
  assert.equal(EXPIRY_CHOICES.filter((c) => c.default).length, 1);
  assert.ok(EXPIRY_CHOICES.some((c) => c.seconds === 0));
});

test("each role may do its own permissions and those of the roles below, an owner all", () => {
  const perms = [{ name: "read", title: "Read" }, { name: "edit", title: "Edit" }, { name: "admin", title: "" }];
  assert.deepEqual(rolePermissions(perms, [{ role: 0, permissions: ["read"] }, { role: 1, permissions: ["edit"] }]), [
    { role: "viewer", permissions: ["Read"] },
    { role: "editor", permissions: ["Read", "Edit"] },
    { role: "owner", permissions: ["Read", "Edit", "admin"] },
  ]);
  assert.deepEqual(rolePermissions(perms, []).map((r) => r.permissions.length), [0, 0, 3]);
  assert.deepEqual(rolePermissions([], []), []);
});

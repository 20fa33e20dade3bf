// What the shell's sharing says and parses, with no DOM and no connection,
// so that node tests it (web/js/test/shell.test.mjs): role names, the roles
// one may give and what each may do in a gadget, a share link's URL and
// the secret in what a user pastes, and a link's terms in words.

// ROLE_NAMES are Gadgets.Role's enumerants by value (schema/gadget.capnp:
// viewer @0, editor @1, owner @2; ordinals never change).
const ROLE_NAMES = ["viewer", "editor", "owner"];

export function roleName(role) {
  return ROLE_NAMES[role] ?? `role ${role}`;
}

// rolesUpTo is the roles one holding role may share or link at: up to
// their own, lowest first.
export function rolesUpTo(role) {
  return ROLE_NAMES.slice(0, Math.max(0, Math.min(role ?? 0, ROLE_NAMES.length - 1)) + 1)
    .map((name, value) => ({ name, value }));
}

// rolePermissions says what each role may do in a gadget whose blueprint
// declares its own permissions ([{name, title}], Blueprint.permissions)
// and the roles that bundle them ([{role, permissions: [name]}]): a role
// holds its own and those of the roles below it, and an owner holds every
// one. It is [{role: name, permissions: [title]}] for each role, lowest
// first, or empty where the blueprint declares no permissions.
export function rolePermissions(permissions, roles) {
  if (permissions.length === 0) {
    return [];
  }
  const title = new Map(permissions.map((p) => [p.name, p.title || p.name]));
  const held = new Set();
  return ROLE_NAMES.map((name, role) => {
    const own = role === ROLE_NAMES.length - 1
      ? permissions.map((p) => p.name)
      : roles.filter((r) => r.role === role).flatMap((r) => r.permissions);
    own.forEach((p) => held.add(p));
    return { role: name, permissions: [...held].map((p) => title.get(p) ?? p) };
  });
}

// REDEEM is the shell's URL fragment that carries a link's secret.
const REDEEM = "#redeem=";

// linkURL is the shell's address that offers to redeem secret.
export function linkURL(origin, secret) {
  return `${origin}/${REDEEM}${encodeURIComponent(secret)}`;
}

// secretFrom is the secret in what a user pasted: a link (linkURL's), or
// the secret itself. What is not a secret passes through, for the server
// to refuse with its one answer.
export function secretFrom(text) {
  const s = String(text).trim();
  const at = s.indexOf(REDEEM);
  return at < 0 ? s : decode(s.slice(at + REDEEM.length));
}

// secretInFragment is the secret of a #redeem=… fragment, or null.
export function secretInFragment(hash) {
  return hash.startsWith(REDEEM) && hash.length > REDEEM.length ? decode(hash.slice(REDEEM.length)) : null;
}

function decode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// EXPIRY_CHOICES are how long a new link may be redeemed.
export const EXPIRY_CHOICES = [
  { name: "never expires", seconds: 0 },
  { name: "expires in 1 hour", seconds: 3600 },
  { name: "expires in 1 day", seconds: 86400, default: true },
  { name: "expires in 7 days", seconds: 7 * 86400 },
];

// linkTerms says, in words, who made a link and what is left of it; now
// and expiresAt are Unix milliseconds (expiresAt 0: never).
export function linkTerms({ createdBy, expiresAt, singleUse, consumed, redemptions }, now) {
  const parts = [`by ${createdBy}`];
  if (consumed) {
    parts.push("used");
  } else if (expiresAt > 0 && expiresAt <= now) {
    parts.push("expired");
  } else if (expiresAt > 0) {
    parts.push(`until ${new Date(expiresAt).toLocaleString()}`);
  }
  if (singleUse && !consumed) {
    parts.push("single use");
  }
  parts.push(`${redemptions} redeemed`);
  return parts.join(" · ");
}

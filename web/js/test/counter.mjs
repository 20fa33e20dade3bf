// The test counter's bindings for the Node tests: the very file
// `gadgetd blueprint build` (make schema) wrote for internal/testcounter, as
// a frame loads it. It is a classic script that takes capnp-es from
// gadgetd.capnp, where the frame runtime puts it, and leaves its exports in
// gadgetd.schemas["counter.capnp"]; here gadgetd.capnp is the capnp-es the
// tests import, so that the bindings and the connections share its classes.

import * as capnp from "capnp-es";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { runInThisContext } from "node:vm";

const file = fileURLToPath(new URL("../../../internal/testcounter/counterpb/counter.capnp.js", import.meta.url));
globalThis.gadgetd ??= {};
globalThis.gadgetd.capnp ??= capnp;
runInThisContext(readFileSync(file, "utf8"), { filename: file });

export const { Counter, Listener } = globalThis.gadgetd.schemas["counter.capnp"];

// Package desk is where the kernel meets the gatekeepers: the one object the
// server asks to bind a gatekeeper to a gadget, to hand a gadget the
// capability of a binding, to list and decide actions, and to read the
// audit log.
//
// A Desk owns the ledger (bindings, the action queue and the audit log, in
// the server's bbolt file), the services the operator configured, built by
// their kinds, and the applier that makes approved actions' real calls, in
// each binding's queue order, exactly once. Every gatekeeper capability it
// hands out is wrapped once: calls to methods its kind did not declare an
// effect for never reach the kind, every call is written to the audit log
// with its outcome, and unbinding (or removing the gadget) revokes every
// reference at once, also one the gadget stored.
package desk

// Package ledger is the durable heart of the gatekeepers' action model: the
// bindings, the action queue and the audit log, kept in buckets of gadgetd's
// bbolt file (all named "gk..."; the layout is at the top of ledger.go).
//
// A binding (Bind, Unbind, SetAutoApprove) names one gatekeeper of one
// gadget. An action a gadget asks for through a binding is queued (Queue)
// Pending, or Approved at once if the binding auto-approves its method, and
// waits for its owner to Decide it. Each owner's actions are numbered (Seq)
// in the order they were queued, and each binding's unfinished actions form
// its queue: only the head, the oldest, may begin its real call (Begin), and
// only when it is Approved, so a binding's actions apply in order, one at a
// time, and an approved action waits behind a pending one. Rejected, Applied
// and Failed actions leave the queue.
//
// Exactly once rests on one transaction: Begin marks the action Applying
// before its real call is made, and Finish records the outcome after. A crash
// between the two leaves it Applying; the next Applier.Start asks the service
// whether the call took effect (a gatekeepers.Reconciler) and records the
// answer, or, if it cannot tell, marks the action InDoubt, which holds the
// binding until a human approves it again (retry) or rejects it (drop). So
// no action is ever made twice without a human saying so.
//
// The Applier makes the real calls, woken by the ledger's own commits. Watch
// tells a listener, in commit order, about every action of an owner that is
// queued or changes state. The audit log (Record, Audit) keeps every call on
// a gatekeeper, and Finish adds each action's real outcome to it.
//
// Everything a gadget can grow is bounded, per owner or gadget: bindings per
// gadget, open actions, kept finished actions and audit entries per owner,
// payloads, and every text field (1 KiB, cut on a rune boundary). Another
// owner's action ids are not found, exactly as ids that do not exist.
//
// The ledger takes a *bolt.DB it does not own and touches only its own
// buckets, so it shares the store's file and its crash safety.
package ledger

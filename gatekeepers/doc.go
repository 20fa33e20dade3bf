// Package gatekeepers is the machinery of gadgetd's gatekeepers: the only
// way a gadget reaches anything outside its sandbox.
//
// A gatekeeper is a capability the kernel serves to one gadget under a
// binding: a name the gadget's owner (or an editor) gave to one narrow
// resource of one service the operator configured, such as one GitHub
// repository or one URL prefix. Every call on it is written to the owner's
// audit log. Each method of a kind is declared, once, an observation (a
// read, made at once) or an action (a side effect): an action is not made
// when the gadget asks, but queued durably and answered with a simulated
// result, and made for real only when a human approves it.
//
// A Kind is one kind of gatekeeper (http, github): its Cap'n Proto
// interface, which extends schema.Gatekeeper, the effect of each of its
// methods, and how it builds a Service from the operator's configuration. A
// Service checks the resource a binding names, serves the gatekeeper
// capability for a binding, and applies an approved action. Kinds are
// registered in one place (package gatekeepers/kinds); adding one touches
// no kernel code.
//
// A kind's methods reach the action model through Calls: Describe gives the
// audit line of the call, Queue queues the call's action, and Pending
// returns the binding's actions not yet applied, so that reads can overlay
// the changes the gadget was promised (an issue it just "created" shows in
// its own listing, marked pending).
package gatekeepers

// Package membrane separates an inside (a gadget, seen through one user's
// session) from an outside (that user's client) so that one check governs
// everything that passes between them, however it passed.
//
// A capability that crosses the membrane, in either direction, in the params
// or the results of a call through it (pipelined calls included), arrives
// wrapped: every call on the wrapper is checked, and what crosses in that
// call is wrapped in turn. So a user's listener the gadget holds, a second
// capability that listener returned to the gadget, an object the gadget
// handed the user and whatever the user passed through that object are all
// behind the same check, and once it fails for good the membrane releases
// every capability it wraps. A wrapper that crosses back to the side its
// target lives on is unwrapped, and the inside's own objects come in as
// themselves even through another membrane with the same inside (another
// session of the gadget), so the inside recognizes its own objects. The
// outside does not, across membranes or crossings: an object handed out
// twice is two wrappers. A capability passed back and forth between two
// membranes gains a wrapper each way; past MaxDepth it is refused, so no
// call can be made to cost without bound. This is the membrane of the object-capability literature (Mark
// Miller's thesis, section 9; Sandstorm's membranes), built from go-capnp's
// ClientHook.
package membrane

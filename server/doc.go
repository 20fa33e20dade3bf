// Package server is the gadgetd kernel: the Gateway every connection
// bootstraps, users and their tokens, one Workspace per user, blueprints, the
// gadget registry, the Host and Storage capabilities lent to each gadget's
// sandbox, and the Cap'n Proto TCP and HTTP front doors.
//
// Every capability it exports is built by internal/capserver, so that unknown
// methods take the normal answer path (see that package for why). Durable
// state lives behind the store interface (internal/store); each
// gadget's code runs in a wasmhost sandbox.
//
// A Server is configured once, by Options passed to Open, and never changes.
package server

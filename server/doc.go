// Package server is the gadgetd kernel's capabilities: the Gateway every
// connection bootstraps, users and their tokens, one Workspace per user,
// blueprints and their installs, the gadget registry, and the Host and
// Storage capabilities lent to each gadget's sandbox. It serves them on
// Cap'n Proto listeners guarded by internal/rpcguard; HTTP is package web.
//
// Every capability it exports is built by internal/capserver, so that unknown
// methods take the normal answer path (see that package for why). Durable
// state lives behind the store interface (internal/store), a gadget's data
// behind internal/storage's per-call transactions; each gadget's code runs
// in a wasmhost sandbox.
//
// A Server is configured once, by Options passed to Open, and never changes.
package server

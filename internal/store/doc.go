// Package store keeps gadgetd's durable state: users and their hashed tokens,
// blueprints, the gadget registry, and each gadget's private key-value data.
// GadgetData presents one gadget's data as a storage.Store, the backend
// package storage runs the gadget's call transactions over.
//
// Store is an interface so that the embedded bbolt implementation (Open) can
// later be replaced by one on PostgreSQL for several nodes. Two rules keep that
// possible: every method is one transaction, and no transaction touches the
// data of two gadgets.
package store

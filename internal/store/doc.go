// Package store keeps gadgetd's durable state: users and their hashed tokens,
// blueprints, the gadget registry, and each gadget's private key-value data.
// GadgetData presents one gadget's data as a storage.Store, the backend
// package storage runs the gadget's call transactions over.
//
// Store is an interface so that the embedded bbolt implementation (Open) can
// later be replaced by one on PostgreSQL for several nodes. Two rules keep that
// possible: every method is atomic on its own, and no method touches the data
// of two gadgets.
//
// Every method returns only once what it wrote is durable. The bbolt store
// commits gadget data by group commit (commit.go): the Commits of concurrent
// calls, to any gadgets, share one bbolt transaction and one fsync, while
// each stays all or nothing, fails alone, and is answered only after that
// transaction has committed. A Commit that finds no other running starts its
// transaction at once; none waits for company.
package store

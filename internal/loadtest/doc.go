// Package loadtest is what gadgetd's load measurements share (idlerss,
// wsload in internal/cmd): a real `gadgetd serve --dev` process on a fresh
// data directory and free loopback ports, its resident set size read from
// /proc, and the counter gadgets the clients use. The measurements assert
// nothing about speed or size; they print what they saw
// (docs/BENCHMARKS.md keeps the figures).
package loadtest

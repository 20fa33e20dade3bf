//go:build race

package interop

// raceEnabled: this test binary runs under the race detector, so the gadgetd
// it builds does too, and a data race in the server fails the test.
const raceEnabled = true

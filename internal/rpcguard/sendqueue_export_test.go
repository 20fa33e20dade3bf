package rpcguard

import "testing"

// SetWriteHook makes f run after each write's critical section until t's
// cleanup, for the tests of package rpcguard_test. Call it before starting
// the server, so its cleanup runs once the server has closed.
func SetWriteHook(t *testing.T, f func()) {
	testHookWritten = f
	t.Cleanup(func() { testHookWritten = nil })
}

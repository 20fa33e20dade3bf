// Package leakcheck makes a test binary fail when its tests leak goroutines
// or Cap'n Proto capabilities.
//
// Every package that handles capabilities calls Install first in its
// TestMain, before any capability exists, and ends with Verify:
//
//	func TestMain(m *testing.M) {
//		leakcheck.Install()
//		code := m.Run()
//		// ... the package's own cleanup ...
//		os.Exit(leakcheck.Verify(code))
//	}
//
// A leaked capability is a capnp.Client that was garbage-collected without
// being released (capnp.SetClientLeakFunc). go-capnp only notices that in a
// finalizer, so Collect runs the collector until the reports stop coming.
// A leaked goroutine is one still running after the tests and their
// cleanups (go.uber.org/goleak).
//
// Reports are global to the test binary; tests that count leaks of their own
// take a Mark first and read what came Since it.
package leakcheck

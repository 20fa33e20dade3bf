package leakcheck_test

import (
	"os"
	"testing"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/leakcheck"
)

// TestMain installs the reporter but does not Verify: the tests here leak on
// purpose.
func TestMain(m *testing.M) {
	leakcheck.Install()
	os.Exit(m.Run())
}

func TestVerifyFailsWhileAGoroutineIsStillRunning(t *testing.T) {
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		<-stop
	}()
	if code := leakcheck.Verify(0); code == 0 {
		t.Fatal("Verify passed with a goroutine still running")
	}
	close(stop)
	<-stopped
	if code := leakcheck.Verify(0); code != 0 {
		t.Fatalf("Verify = %d once the goroutine stopped; want 0", code)
	}
}

func TestSinceReportsAClientNeverReleasedAndOnlyThat(t *testing.T) {
	mark := leakcheck.Now()
	capserver.New(nil, nil, nil).Release()
	if leaks := leakcheck.Since(mark, ""); len(leaks) != 0 {
		t.Fatalf("a released client was reported: %q", leaks)
	}
	_ = capserver.New(nil, nil, nil) // dropped unreleased
	leaks := leakcheck.Since(mark, "leakcheck_test.TestSinceReportsAClientNeverReleased")
	if len(leaks) != 1 {
		t.Fatalf("%d reports of the dropped client; want 1", len(leaks))
	}
	if code := leakcheck.Verify(0); code == 0 {
		t.Fatal("Verify passed with a client leaked")
	}
}

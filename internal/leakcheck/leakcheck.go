package leakcheck

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"go.uber.org/goleak"
)

var reports struct {
	sync.Mutex
	all []string // one creation stack per leaked client, oldest first
}

// off is set when the binary fuzzes (-test.fuzz): its workers run a target
// hundreds of thousands of times, and recording where every client was
// created stalled them (208 execs/s and then none, against 17,000 without).
// The seeds are checked for leaks by the ordinary test run. It is set too
// when the binary only benchmarks (-test.run '^$' with -test.bench, as make
// bench runs it): recording a stack trace per capability reference doubled
// a guest-to-host call, so the benchmarks measured the checker, which a
// server does not run. make test checks the same code for leaks.
var off bool

// Install starts recording leaked capabilities. go-capnp requires it before
// the first capability is created; it records from then on. It parses the
// command line, as TestMain may.
func Install() {
	if !flag.Parsed() {
		flag.Parse()
	}
	if flagValue("test.fuzz") != "" || flagValue("test.bench") != "" && flagValue("test.run") == "^$" {
		off = true
		return
	}
	capnp.SetClientLeakFunc(func(msg string) {
		reports.Lock()
		reports.all = append(reports.all, msg)
		reports.Unlock()
	})
}

func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// Collect runs the garbage collector until no new leak is reported for a
// while, so that every client that became garbage before the call has been
// reported.
func Collect() {
	last, quiet := -1, 0
	for quiet < 3 {
		runtime.GC()
		time.Sleep(20 * time.Millisecond) // finalizers run on their own goroutine
		n := count()
		if n == last {
			quiet++
		} else {
			last, quiet = n, 0
		}
	}
}

func count() int {
	reports.Lock()
	defer reports.Unlock()
	return len(reports.all)
}

// Mark is a position in the leak reports.
type Mark int

// Now collects garbage and returns the position after every leak reported
// so far.
func Now() Mark {
	Collect()
	return Mark(count())
}

// Since collects garbage and returns the leaks reported after m whose
// creation stack contains site (all of them if site is empty).
func Since(m Mark, site string) []string {
	Collect()
	reports.Lock()
	defer reports.Unlock()
	var out []string
	for _, r := range reports.all[m:] {
		if strings.Contains(r, site) {
			out = append(out, r)
		}
	}
	return out
}

// Verify checks the whole test binary for leaks once its tests and cleanups
// have run, prints what leaked to stderr, and returns the exit code: code
// if nothing leaked, else 1. opts name goroutines that are not leaks (each
// caller documents why).
func Verify(code int, opts ...goleak.Option) int {
	if off {
		return code
	}
	leaked := Since(0, "")
	for i, r := range leaked {
		fmt.Fprintf(os.Stderr, "leakcheck: capability %d of %d was never released; %s\n", i+1, len(leaked), r)
	}
	if len(leaked) > 0 {
		code = 1
	}
	if err := goleak.Find(opts...); err != nil {
		fmt.Fprintf(os.Stderr, "leakcheck: goroutines still running after the tests: %v\n", err)
		code = 1
	}
	return code
}

// Main is TestMain for a package with no cleanup of its own: it runs the
// tests and exits, failing the run if they leaked.
func Main(m *testing.M, opts ...goleak.Option) {
	Install()
	os.Exit(Verify(m.Run(), opts...))
}

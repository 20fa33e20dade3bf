// Command wsload measures the load gadgetd holds from browser shells over
// websocket: it starts `gadgetd serve --dev` on a fresh data directory and
// free loopback ports, gives several users some counter gadgets each, and
// opens many shell sessions at once, each as the shell and its gadget frame
// would: a websocket to /ws, a login, a gadget opened and a frame ticket
// from it, and a second websocket to /ws/frame with that ticket. Once every
// session is up it makes calls on each at a steady rate for a while (some
// sessions also watch their counter), then closes them all, and prints the
// sessions held, the calls made, the errors, the call latency percentiles
// and the server's resident set size (VmRSS, Linux only) before, at the
// peak, and at fixed times after the sessions closed.
//
//	go build -o bin/gadgetd ./cmd/gadgetd
//	go run ./internal/cmd/wsload [-gadgetd bin/gadgetd] [-sessions 1000] [-hold 60s]
//
// It is a measurement, not a test: it asserts nothing about speed or size.
// It exits 1, saying why, if any session failed or any call erred, if a
// watcher missed a change, or if the server logged a warning or an error
// while the sessions were up (those it logs as they close are counted and
// shown, not failed: see docs/BENCHMARKS.md). make ws-load
// runs it (and make bench runs make ws-load); docs/BENCHMARKS.md records
// the figures.
//
// Every session holds two websockets, and the server counts each as a
// Cap'n Proto connection, so by default wsload raises the server's
// connections.max to two per session plus 64; -connections-max 1024 runs
// with the server's default instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gadgetd/gadgetd/internal/loadtest"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.gadgetd, "gadgetd", "bin/gadgetd", "the gadgetd binary to measure")
	flag.StringVar(&cfg.examples, "examples", "./examples", "built examples directory for serve --dev (make examples)")
	flag.IntVar(&cfg.sessions, "sessions", 1000, "concurrent shell sessions, each a /ws and a /ws/frame websocket")
	flag.IntVar(&cfg.users, "users", 10, "users the sessions log in as")
	flag.IntVar(&cfg.gadgetsPerUser, "gadgets", 10, "counter gadgets of each user (at most the server's users.max_gadgets, 100)")
	flag.DurationVar(&cfg.hold, "hold", 60*time.Second, "how long the sessions make calls once all are up")
	flag.DurationVar(&cfg.interval, "interval", 2*time.Second, "between two calls of one session")
	flag.IntVar(&cfg.incrementEvery, "increment-every", 4, "every Nth call of a session is an increment, the others gets")
	flag.IntVar(&cfg.watchEvery, "watch-every", 10, "of the sessions on one gadget, the first and every Nth after it also watch it")
	flag.IntVar(&cfg.localAddrs, "local-addrs", 100, "loopback addresses (127.0.0.1 and up) the sessions dial from")
	flag.IntVar(&cfg.settingUp, "setting-up", 32, "sessions setting up at once")
	flag.IntVar(&cfg.maxConns, "connections-max", 0, "the server's connections.max (0: two per session plus 64)")
	after := flag.String("after", "0s,30s,60s", "when to read the server's RSS after the sessions closed")
	flag.Parse()
	var err error
	if cfg.after, err = loadtest.ParseDurations(*after); err != nil {
		fmt.Fprintln(os.Stderr, "wsload: -after:", err)
		os.Exit(2)
	}
	r, err := run(context.Background(), cfg, os.Stdout)
	if err == nil {
		err = r.failure()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsload: FAILED:", err)
		os.Exit(1)
	}
}

// print writes the result as the report wsload prints.
func (r *result) print(w io.Writer) {
	c := r.cfg
	fmt.Fprintf(w, "%-28s %d of %d (%d set up; %s to set them all up)\n", "sessions held", r.held, c.sessions, r.setUp, r.setupTime.Round(time.Millisecond))
	fmt.Fprintf(w, "%-28s %d (%d offered: one per %s per session for %s)\n", "calls done", r.calls, r.offered, c.interval, c.hold)
	fmt.Fprintf(w, "%-28s %d\n", "call errors", r.callErrors)
	fmt.Fprintf(w, "%-28s p50 %s, p99 %s\n", "call latency", r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond))
	fmt.Fprintf(w, "%-28s %d heard of %d sent, by %d watching sessions\n", "changes to watchers", r.heard, r.expected, r.watchers)
	fmt.Fprintf(w, "%-28s %d\n", "server warnings (up)", r.warnings)
	fmt.Fprintf(w, "%-28s %8.1f MiB\n", "VmRSS baseline", loadtest.MiB(r.baseline))
	fmt.Fprintf(w, "%-28s %8.1f MiB   (%+.1f MiB against the baseline)\n", "VmRSS peak", loadtest.MiB(r.peak), loadtest.MiB(r.peak-r.baseline))
}

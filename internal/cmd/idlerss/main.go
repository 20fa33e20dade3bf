// Command idlerss measures how much memory gadgetd gives back once its
// clients have left: it starts `gadgetd serve --dev` on a fresh data
// directory and free loopback ports, drives many concurrent clients against
// the counter blueprint (each opens a gadget and a session, increments and
// reads it, some watch it), lets them all disconnect, and prints the
// server's resident set size (VmRSS, Linux only) before, at the peak, and at
// fixed times after the last client left.
//
//	go build -o bin/gadgetd ./cmd/gadgetd
//	go run ./internal/cmd/idlerss [-gadgetd bin/gadgetd] [-clients 200] [-gadgets 64]
//
// It is a measurement, not a test: RSS depends on the machine, the Go
// version and the kernel, so it asserts nothing (docs/BENCHMARKS.md records
// the figures). make idle-rss runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
	"github.com/gadgetd/gadgetd/internal/loadtest"
	"github.com/gadgetd/gadgetd/schema"
)

func main() {
	gadgetd := flag.String("gadgetd", "bin/gadgetd", "the gadgetd binary to measure")
	examples := flag.String("examples", "./examples", "examples directory for serve --dev")
	clients := flag.Int("clients", 200, "concurrent clients")
	gadgets := flag.Int("gadgets", 64, "counter gadgets the clients share (a user may have 100)")
	calls := flag.Int("calls", 10, "increments per client")
	watchEvery := flag.Int("watch-every", 4, "every Nth client also watches its counter")
	hold := flag.Duration("hold", 3*time.Second, "how long every client stays connected after its calls")
	after := flag.String("after", "0s,5s,30s,60s,2m", "when to sample RSS after the last client left")
	flag.Parse()
	if err := run(*gadgetd, *examples, *clients, *gadgets, *calls, *watchEvery, *hold, *after); err != nil {
		fmt.Fprintln(os.Stderr, "idlerss:", err)
		os.Exit(1)
	}
}

func run(gadgetd, examples string, clients, gadgets, calls, watchEvery int, hold time.Duration, after string) error {
	samples, err := loadtest.ParseDurations(after)
	if err != nil {
		return fmt.Errorf("-after: %w", err)
	}
	ctx := context.Background()
	srv, err := loadtest.Start(gadgetd, loadtest.WithExamples(examples))
	if err != nil {
		return err
	}
	defer srv.Stop()

	time.Sleep(2 * time.Second) // let start-up garbage settle
	baseline, err := srv.RSS()
	if err != nil {
		return err
	}
	fmt.Printf("%-28s %8.1f MiB\n", "baseline (after start)", loadtest.MiB(baseline))

	ids, err := loadtest.CreateCounters(ctx, srv.CapnpAddr, srv.Token, gadgets, "idlerss")
	if err != nil {
		return err
	}

	stopPeak := srv.SamplePeak(200 * time.Millisecond)
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr error
	var errOnce sync.Once
	// Every client is connected before the first leaves: the peak is
	// `clients` connections and sessions at once.
	var connected sync.WaitGroup
	connected.Add(clients)
	// The server admits at most 64 connections per address that have not
	// logged in yet; like a real client fleet, the clients log in a few at
	// a time rather than all in the same instant.
	loggingIn := make(chan struct{}, 32)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := runClient(ctx, srv.CapnpAddr, srv.Token, ids[i%len(ids)], calls, watchEvery > 0 && i%watchEvery == 0, loggingIn, &connected, hold)
			if err != nil {
				failed.Add(1)
				errOnce.Do(func() { firstErr = err })
			}
		}()
	}
	wg.Wait()
	peak := stopPeak()
	left := time.Now()
	fmt.Printf("%-28s %8.1f MiB   (%d clients on %d gadgets, %d failed, %s)\n", "peak (clients connected)",
		loadtest.MiB(peak), clients, len(ids), failed.Load(), left.Sub(start).Round(time.Millisecond))
	if firstErr != nil {
		fmt.Printf("  first client error: %v\n", firstErr)
	}

	return srv.RSSAfter(left, samples, func(d time.Duration, n int64) {
		fmt.Printf("%-28s %8.1f MiB   (%+.1f MiB against the baseline)\n", fmt.Sprintf("%s after the clients left", d), loadtest.MiB(n), loadtest.MiB(n-baseline))
	})
}

// runClient is one client: its own connection, login, gadget and session,
// calls increments and a get, optionally watches, waits until every client
// is connected, stays for hold, and disconnects.
func runClient(ctx context.Context, addr, token, id string, calls int, watch bool, loggingIn chan struct{}, connected *sync.WaitGroup, hold time.Duration) (err error) {
	done := sync.OnceFunc(connected.Done)
	defer done() // a client that failed early must not hold the others
	loggingIn <- struct{}{}
	conn, err := client.Dial(ctx, addr)
	if err != nil {
		<-loggingIn
		return err
	}
	defer conn.Close()
	ws, release := conn.Login(ctx, token)
	defer release()
	gf, releaseGadgets := ws.Gadgets(ctx, nil)
	_, err = gf.Struct() // the login has been answered
	releaseGadgets()
	<-loggingIn
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	opened, release := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	defer release()
	session, release := opened.Gadget().Open(ctx, nil)
	defer release()
	counter := counterpb.Counter(session.Session())

	if watch {
		var heard atomic.Int64 // not reported: the listener only has to exist
		l := loadtest.CountingListener(&heard)
		f, release := counter.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(l) })
		// The answer holds the subscription's handle: keep it while connected.
		defer release()
		if _, err := f.Struct(); err != nil {
			return fmt.Errorf("watch: %w", err)
		}
	}
	for range calls {
		f, release := counter.Increment(ctx, nil)
		_, err := f.Struct()
		release()
		if err != nil {
			return fmt.Errorf("increment: %w", err)
		}
	}
	f, release := counter.Get(ctx, nil)
	_, err = f.Struct()
	release()
	if err != nil {
		return fmt.Errorf("get: %w", err)
	}
	done()
	connected.Wait()
	time.Sleep(hold)
	return nil
}

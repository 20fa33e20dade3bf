package rpcguard_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
)

// sendBareHeader connects, sends a message header claiming 64 MiB (past any
// stranger's message limit) and nothing else, and waits until the server
// hangs up. It returns the peer's address as the server sees it.
func sendBareHeader(t *testing.T, addr string) string {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer nc.Close()
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[4:], (64<<20)/8)
	nc.Write(hdr[:])
	nc.SetReadDeadline(time.Now().Add(time.Minute))
	io.Copy(io.Discard, nc) // until the server closes (or resets) the connection
	return nc.LocalAddr().String()
}

// Token-less peers cost nothing to make, and each refused or cut-off one
// used to log a line: 5000 bare headers wrote 5000 lines. Now lines about
// peers that have not logged in pass a token bucket, the rest are counted in
// a summary line, and lines about a peer that has logged in are never held
// back, however many strangers came first.
func TestLogLinesAboutTokenlessPeersAreRateLimitedAndTheDropsCounted(t *testing.T) {
	const (
		burst     = 5
		strangers = 150
	)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	bootstrap := capnp.Client((&plaincounter.Counter{}).Client())
	defer bootstrap.Release()
	var loggedIn atomic.Bool // the next connections count as logged in
	// One token per 1000 s: within the test the bucket gives exactly its burst.
	lim := rpcguard.Limits{Unauthenticated: rpcguard.Budget{LogRate: 1e-3, LogBurst: burst}}
	srv := rpcguard.NewServer(func(p *rpcguard.Peer) capnp.Client {
		if loggedIn.Load() {
			p.Authenticated(p.RemoteAddr().String()) // each connection its own user
		}
		return bootstrap.AddRef()
	}, 0, lim, logger)
	go srv.Serve(ln)
	addr := ln.Addr().String()

	// 150 strangers, 10 at a time: each is cut off for its message size.
	sem := make(chan struct{}, 10)
	var wg sync.WaitGroup
	for range strangers {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			sendBareHeader(t, addr)
		}()
	}
	wg.Wait()
	waitConns(t, srv, 0)

	// A peer that has logged in breaks the same limit: its error is logged.
	loggedIn.Store(true)
	member := sendBareHeader(t, addr)
	waitConns(t, srv, 0)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Close(ctx); err != nil { // writes the pending summary
		t.Fatal(err)
	}

	var strangerLines, memberLines, dropped int
	var summaries []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var r struct {
			logRecord
			Dropped int `json:"dropped"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch {
		case r.Remote == member:
			memberLines++
		case r.Remote != "":
			strangerLines++
		case r.Dropped > 0:
			dropped += r.Dropped
			summaries = append(summaries, line)
		}
	}
	t.Logf("%d strangers: %d lines logged, %d dropped and counted in %d summary lines: %v",
		strangers, strangerLines, dropped, len(summaries), summaries)
	if strangerLines > burst {
		t.Errorf("%d lines were logged about %d strangers; the limit allows %d", strangerLines, strangers, burst)
	}
	// Every stranger was cut off with at least one error line: none may go
	// uncounted.
	if strangerLines+dropped < strangers {
		t.Errorf("%d lines logged and %d counted as dropped, for %d strangers each cut off with an error", strangerLines, dropped, strangers)
	}
	if len(summaries) == 0 { // one, or one per 10 s if the flood took longer
		t.Error("no line says how many lines were dropped")
	}
	if memberLines == 0 {
		t.Errorf("nothing was logged about %s, a peer that had logged in and broke a limit, after the strangers emptied the bucket", member)
	}
}

// String is everything logged so far.
func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

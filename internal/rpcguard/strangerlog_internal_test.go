package rpcguard

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the summary timer's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The count of dropped lines is written by itself once the period is over,
// not only when the server closes: a flood that stops is still reported.
func TestDroppedStrangerLinesAreSummarizedAfterThePeriodWithoutClose(t *testing.T) {
	var out syncBuffer
	l := newStrangerLog(slog.New(slog.NewTextHandler(&out, nil)), Budget{LogRate: 1e-3, LogBurst: 2})
	l.every = 50 * time.Millisecond
	defer l.close()
	for range 10 {
		l.log(slog.LevelWarn, "refused")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "dropped=8") {
		if time.Now().After(deadline) {
			t.Fatalf("no summary of the 8 dropped lines within 10 s of a 50 ms period; logged:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := strings.Count(out.String(), "msg=refused"); n != 2 {
		t.Errorf("%d lines logged past a burst of 2", n)
	}
	// The next flood starts a new period and a new count.
	for range 3 {
		l.log(slog.LevelWarn, "refused")
	}
	for !strings.Contains(out.String(), "dropped=3") {
		if time.Now().After(deadline) {
			t.Fatalf("no summary of the second flood's 3 dropped lines; logged:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Lines the handler would discard (debug lines on a server that logs
// warnings) take no token, so they cannot crowd out the lines that show.
func TestStrangerLinesNobodySeesTakeNoToken(t *testing.T) {
	var out syncBuffer
	l := newStrangerLog(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn})), Budget{LogRate: 1e-3, LogBurst: 1})
	defer l.close()
	for range 100 {
		l.log(slog.LevelDebug, "peer went away")
	}
	l.log(slog.LevelError, "peer broke a limit")
	if !strings.Contains(out.String(), "peer broke a limit") {
		t.Fatalf("100 discarded debug lines used up the bucket: logged %q", out.String())
	}
}

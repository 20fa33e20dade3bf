package rpcguard

// Design: a peer that has not logged in costs nothing to make and may be
// refused or cut off as fast as it can connect, and each time the server
// would log a line. Those lines all go through one strangerLog per Server: a
// token bucket (Budget.LogRate, Budget.LogBurst) lets the first through and
// then a steady trickle; the rest are counted, and one line per
// logSummaryEvery says how many were dropped. mu guards the bucket, the
// count and the timer; the summary is written by the timer's goroutine, or
// by close. Lines about authenticated peers and the server's own failures
// (accept errors) never pass through here: they stay visible whatever
// strangers do.

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gadgetd/gadgetd/internal/tokenbucket"
)

// logSummaryEvery is how often, at most, a line counts the dropped ones.
const logSummaryEvery = 10 * time.Second

// strangerLog writes the log lines about peers that have not logged in,
// within a rate. Safe for concurrent use.
type strangerLog struct {
	logger *slog.Logger
	every  time.Duration // logSummaryEvery; shorter in tests

	mu      sync.Mutex
	bucket  tokenbucket.Bucket
	dropped int
	since   time.Time   // when the first line of dropped was
	summary *time.Timer // pending summary; nil when nothing is dropped
	closed  bool
}

func newStrangerLog(logger *slog.Logger, b Budget) *strangerLog {
	return &strangerLog{logger: logger, every: logSummaryEvery, bucket: tokenbucket.New(b.LogRate, b.LogBurst)}
}

// log writes a line at level if the handler wants it and the rate allows,
// and counts it as dropped otherwise.
func (l *strangerLog) log(level slog.Level, msg string, args ...any) {
	ctx := context.Background()
	if !l.logger.Enabled(ctx, level) {
		return // a line nobody would see costs no token
	}
	now := time.Now()
	l.mu.Lock()
	if l.bucket.Take(now) {
		l.mu.Unlock()
		l.logger.Log(ctx, level, msg, args...)
		return
	}
	if l.dropped == 0 {
		l.since = now
	}
	l.dropped++
	if l.summary == nil && !l.closed {
		l.summary = time.AfterFunc(l.every, l.summarize)
	}
	l.mu.Unlock()
}

// summarize writes how many lines were dropped since the last summary.
func (l *strangerLog) summarize() {
	l.mu.Lock()
	n, since := l.dropped, l.since
	l.dropped, l.summary = 0, nil
	l.mu.Unlock()
	if n > 0 {
		l.logger.Warn("capnp: log lines about connections that had not logged in were dropped",
			"dropped", n, "since", since.Format(time.RFC3339), "rate", l.bucket.Rate(), "burst", l.bucket.Burst())
	}
}

// close writes the pending summary now, and schedules no more.
func (l *strangerLog) close() {
	l.mu.Lock()
	l.closed = true
	if l.summary != nil {
		l.summary.Stop()
	}
	l.mu.Unlock()
	l.summarize()
}

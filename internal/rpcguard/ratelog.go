package rpcguard

// Design: a peer that has not logged in costs nothing to make and may be
// refused or cut off as fast as it can connect, and each time the server
// would log a line. Those lines all go through one rateLog per Server: a
// token bucket (Budget.LogRate, Budget.LogBurst) lets the first through and
// then a steady trickle; the rest are counted, and one line per
// logSummaryEvery says how many were dropped. A logged-in user can open
// connections just as fast, each causing an error or two, so the lines
// about each user's connections go through a rateLog of that user's
// (userLogRate, userLogBurst), and one user's flood neither fills the log
// nor hides another's lines. mu guards the bucket, the count and the timer;
// the summary is written by the timer's goroutine, or by close. The
// server's own failures (accept errors) never pass through here.

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gadgetd/gadgetd/internal/tokenbucket"
)

// logSummaryEvery is how often, at most, a line counts the dropped ones.
const logSummaryEvery = 10 * time.Second

// A user's connections may have userLogBurst lines logged about them at
// once, then userLogRate a second. An honest client causes none.
const (
	userLogBurst = 50
	userLogRate  = 1
)

// rateLog writes log lines about some connections (those that have not
// logged in, or one user's) within a rate. Safe for concurrent use.
type rateLog struct {
	logger *slog.Logger
	about  string        // whose lines, for the summary: "connections that had not logged in"
	every  time.Duration // logSummaryEvery; shorter in tests

	mu      sync.Mutex
	bucket  tokenbucket.Bucket
	dropped int
	since   time.Time   // when the first line of dropped was
	summary *time.Timer // pending summary; nil when nothing is dropped
	closed  bool
}

// newStrangerLog is the rateLog of the connections that have not logged in.
func newStrangerLog(logger *slog.Logger, b Budget) *rateLog {
	return newRateLog(logger, b.LogRate, b.LogBurst, "connections that had not logged in")
}

// newUserLog is the rateLog of one user's connections.
func newUserLog(logger *slog.Logger, user string) *rateLog {
	return newRateLog(logger, userLogRate, userLogBurst, fmt.Sprintf("user %q's connections", user))
}

func newRateLog(logger *slog.Logger, rate float64, burst int, about string) *rateLog {
	return &rateLog{logger: logger, about: about, every: logSummaryEvery, bucket: tokenbucket.New(rate, burst)}
}

// log writes a line at level if the handler wants it and the rate allows,
// and counts it as dropped otherwise.
func (l *rateLog) log(level slog.Level, msg string, args ...any) {
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
func (l *rateLog) summarize() {
	l.mu.Lock()
	n, since := l.dropped, l.since
	l.dropped, l.summary = 0, nil
	l.mu.Unlock()
	if n > 0 {
		l.logger.Warn("capnp: log lines about "+l.about+" were dropped",
			"dropped", n, "since", since.Format(time.RFC3339), "rate", l.bucket.Rate(), "burst", l.bucket.Burst())
	}
}

// rested reports whether the log is as a new one would be: its bucket full
// and nothing dropped waiting to be summarized.
func (l *rateLog) rested(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped == 0 && l.bucket.Full(now)
}

// close writes the pending summary now, and schedules no more.
func (l *rateLog) close() {
	l.mu.Lock()
	l.closed = true
	if l.summary != nil {
		l.summary.Stop()
	}
	l.mu.Unlock()
	l.summarize()
}

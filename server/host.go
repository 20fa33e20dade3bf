package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gadgetd/gadgetd/gatekeepers/desk"
	"github.com/gadgetd/gadgetd/internal/tokenbucket"
	"github.com/gadgetd/gadgetd/schema"
)

// host is the Host capability lent to one gadget's sandbox.
type host struct {
	lg   *liveGadget
	desk *desk.Desk // for Host.gatekeeper (gatekeepers.go)
	// storage is the gadget's one Storage capability; every storage() call
	// hands out a reference to it rather than a new server.
	storage schema.Storage
}

func newHost(lg *liveGadget, d *desk.Desk) *host {
	st := lg.storage
	return &host{lg: lg, desk: d, storage: st.capability()}
}

// Shutdown runs when the sandbox drops its last Host reference.
func (h *host) Shutdown() { h.storage.Release() }

func (h *host) Storage(ctx context.Context, call schema.Host_storage) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetStorage(h.storage.AddRef())
}

func (h *host) Log(ctx context.Context, call schema.Host_log) error {
	msg, err := call.Args().Text()
	if err != nil {
		return err
	}
	h.lg.logs.add(call.Args().Level(), msg)
	return nil
}

// logLine is one line of a gadget's log.
type logLine struct {
	time    time.Time
	level   schema.LogLevel
	message string
}

// logLineOverhead is what one kept line costs beyond its text.
const logLineOverhead = 64

// logRing keeps a gadget's newest log lines in memory, within a line count
// and a byte budget, and rate limits what goes in with a token bucket: a
// flood past the rate is dropped and counted, and the next line that gets in
// is preceded by one that says how many were dropped. A ring lives as long as
// its gadget's shell (registry.go): it is a debugging aid, not an audit
// trail, and a gadget that has been idle long enough loses it.
type logRing struct {
	maxLen, maxLines, maxBytes int

	mu      sync.Mutex
	lines   []logLine // oldest first
	bytes   int       // of lines, by cost
	bucket  tokenbucket.Bucket
	dropped int // lines refused since the last one kept
}

func newLogRing(cfg config) *logRing {
	return &logRing{
		maxLen: cfg.logLineSize, maxLines: cfg.logLines, maxBytes: cfg.logBytes,
		bucket: tokenbucket.New(cfg.logRate, cfg.logBurst),
	}
}

func (l logLine) cost() int { return len(l.message) + logLineOverhead }

// add appends a line if the rate allows, cutting it at the line size.
func (r *logRing) add(level schema.LogLevel, msg string) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.bucket.Take(now) {
		r.dropped++
		return
	}
	if r.dropped > 0 {
		r.push(r.droppedLine(now))
		r.dropped = 0
	}
	r.push(logLine{time: now, level: level, message: cut(msg, r.maxLen)})
}

// keep adds a line the host itself writes (a failed commit, say); it is
// never rate limited.
func (r *logRing) keep(level schema.LogLevel, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.push(logLine{time: time.Now(), level: level, message: msg})
}

func (r *logRing) droppedLine(now time.Time) logLine {
	return logLine{time: now, level: schema.LogLevel_warn,
		message: fmt.Sprintf("%d log lines dropped: the gadget logged faster than %g lines per second (bursts of %d)", r.dropped, r.bucket.Rate(), r.bucket.Burst())}
}

// push appends l, dropping the oldest lines past the count or byte budget.
// Callers hold mu.
func (r *logRing) push(l logLine) {
	r.lines = append(r.lines, l)
	r.bytes += l.cost()
	for len(r.lines) > 1 && (len(r.lines) > r.maxLines || r.bytes > r.maxBytes) {
		r.bytes -= r.lines[0].cost()
		r.lines[0] = logLine{} // let the text be collected
		r.lines = r.lines[1:]
	}
}

// cut shortens msg to at most max bytes plus an ellipsis, never splitting a
// character.
func cut(msg string, max int) string {
	if len(msg) <= max {
		return msg
	}
	for max > 0 && !utf8.RuneStart(msg[max]) {
		max--
	}
	return msg[:max] + "…"
}

// newest returns up to limit of the newest lines, oldest first, ending with
// a count of lines dropped since the last one kept, if any.
func (r *logRing) newest(limit int) []logLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.lines)
	if r.dropped > 0 {
		out = append(out, r.droppedLine(time.Now()))
	}
	if limit < len(out) {
		out = out[len(out)-limit:]
	}
	return out
}

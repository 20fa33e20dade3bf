package server

import (
	"context"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/schema"
)

// host is the Host capability lent to one gadget's sandbox.
type host struct {
	lg *liveGadget
	// storage is the gadget's one Storage capability; every storage() call
	// hands out a reference to it rather than a new server.
	storage schema.Storage
}

func newHost(lg *liveGadget) *host {
	st := lg.storage
	return &host{lg: lg, storage: schema.Storage(capserver.New(schema.Storage_Methods(nil, st), st, nil))}
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

// logRing keeps a gadget's newest log lines in memory. The log lives as long
// as the server process; it is a debugging aid, not an audit trail.
type logRing struct {
	maxLen int

	mu    sync.Mutex
	lines []logLine // ring buffer of at most cap(lines) lines
	next  int       // index the next line goes to once the ring is full
}

func newLogRing(lines, maxLen int) *logRing {
	return &logRing{maxLen: maxLen, lines: make([]logLine, 0, lines)}
}

func (r *logRing) add(level schema.LogLevel, msg string) {
	if len(msg) > r.maxLen {
		cut := r.maxLen
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut-- // never split a character
		}
		msg = msg[:cut] + "…"
	}
	l := logLine{time: time.Now(), level: level, message: msg}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) < cap(r.lines) {
		r.lines = append(r.lines, l)
		return
	}
	r.lines[r.next] = l
	r.next = (r.next + 1) % len(r.lines)
}

// newest returns up to limit of the newest lines, oldest first.
func (r *logRing) newest(limit int) []logLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	ordered := append(append([]logLine{}, r.lines[r.next:]...), r.lines[:r.next]...)
	if limit < len(ordered) {
		ordered = ordered[len(ordered)-limit:]
	}
	return ordered
}

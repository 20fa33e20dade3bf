package rpcguard

// Design: rpc.Conn logs through its Options.Logger, and it logs only
// errors, most of them caused by what the peer sent (a Disembargo, Finish
// or Return it had no business sending), one line per message and nothing
// else done about it. So a peer could make the server write a line for
// every 80 bytes it sends. Each connection gets its own connLog: the
// peer's error lines take tokens from a bucket (connErrorBurst, then
// connErrorRate a second), and the line that finds the bucket empty ends
// the connection (Transport.abort, with ErrProtocol) and is the last one
// written about it: the lines rpc.Conn reports while it shuts down, and any
// later, are dropped. Lines about peers that have not logged in also go
// through the Server's strangerLog, which bounds them all together, and
// lines about a user's connections through that user's rateLog. mu
// guards the bucket and the cut-off flag; connLog never holds it while it
// logs or aborts.

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/gadgetd/gadgetd/internal/tokenbucket"
)

// A connection may cause connErrorBurst errors at once and, on average,
// connErrorRate a second (one every 10 s) after that; the next one closes
// it. An honest go-capnp client causes none.
const (
	connErrorBurst = 16
	connErrorRate  = 0.1
)

// connLog is the rpc.Logger of one connection. Every line names the peer,
// and the errors rpc.Conn reports when a peer simply goes away (it closed
// its connection, or hung up) are debug lines: a server sees thousands of
// them, and at error level they drown the errors that matter. Safe for
// concurrent use (rpc.Conn logs from its receive and send goroutines).
type connLog struct {
	t        *Transport
	stranger *rateLog
	remote   string
	logger   *slog.Logger

	mu     sync.Mutex
	errors tokenbucket.Bucket
	cutOff bool // the connection was closed for its errors; it logs no more
}

func newConnLog(t *Transport, remote string, logger *slog.Logger, stranger *rateLog) *connLog {
	return &connLog{t: t, stranger: stranger, remote: remote, logger: logger, errors: tokenbucket.New(connErrorRate, connErrorBurst)}
}

func (l *connLog) Debug(msg string, args ...any) { l.log(slog.LevelDebug, msg, args) }
func (l *connLog) Info(msg string, args ...any)  { l.log(slog.LevelInfo, msg, args) }
func (l *connLog) Warn(msg string, args ...any)  { l.log(slog.LevelWarn, msg, args) }

func (l *connLog) Error(msg string, args ...any) {
	if isOrdinaryDisconnect(msg) {
		l.log(slog.LevelDebug, msg, args)
		return
	}
	l.mu.Lock()
	if l.cutOff {
		l.mu.Unlock()
		return
	}
	allowed := l.errors.Take(time.Now())
	l.cutOff = !allowed
	l.mu.Unlock()
	if allowed {
		l.write(slog.LevelError, msg, args)
		return
	}
	l.t.abort(fmt.Errorf("%w: the connection caused more than %d errors (the last: %s)", ErrProtocol, connErrorBurst, msg))
	l.write(slog.LevelWarn, "capnp connection closed: it caused too many errors; later lines about it are dropped",
		append([]any{"last", msg, "burst", connErrorBurst, "rate", connErrorRate}, args...))
}

// log writes a line unless the connection was cut off.
func (l *connLog) log(level slog.Level, msg string, args []any) {
	l.mu.Lock()
	cutOff := l.cutOff
	l.mu.Unlock()
	if !cutOff {
		l.write(level, msg, args)
	}
}

// write writes a line naming the peer, within the strangers' rate until it
// has logged in.
func (l *connLog) write(level slog.Level, msg string, args []any) {
	args = append([]any{"remote", l.remote}, args...)
	if !l.t.authenticated.Load() {
		l.stranger.log(level, msg, args...)
		return
	}
	if user := l.t.userLog.Load(); user != nil {
		user.log(level, msg, args...)
		return
	}
	l.logger.Log(context.Background(), level, msg, args...)
}

// isOrdinaryDisconnect reports whether an error line of rpc.Conn says only
// that the peer went away. go-capnp reports these errors as text alone, so
// the text is all there is to go by: a client's Close sends an abort that
// says "connection closed"; a peer that hangs up ends the stream (EOF) or
// resets it; answers to a peer that has gone cannot be sent ("send return:
// rpc: connection closed").
func isOrdinaryDisconnect(msg string) bool {
	return strings.HasSuffix(msg, "connection closed") || // remote abort, or a send after the peer went
		strings.HasSuffix(msg, "EOF") || // io.EOF, io.ErrUnexpectedEOF
		strings.HasSuffix(msg, "connection reset by peer") ||
		strings.HasSuffix(msg, "broken pipe")
}

package server

import (
	"log/slog"
	"time"

	"github.com/gadgetd/gadgetd/server/internal/rpcguard"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// Defaults for the limits a Server enforces. Each has an Option.
const (
	DefaultMaxKeySize      = 512
	DefaultMaxValueSize    = 1 << 20
	DefaultMaxStorageSize  = 64 << 20
	DefaultLogLines        = 1000
	DefaultLogLineSize     = 4 << 10
	DefaultMaxWasmSize     = 24 << 20
	DefaultMaxUISize       = 2 << 20
	DefaultMaxSchemaSize   = 2 << 20
	DefaultMaxConnections  = rpcguard.DefaultMaxConns
	DefaultMaxMessageSize  = 32 << 20
	DefaultMaxInFlight     = 512
	DefaultMaxCapTable     = 256
	DefaultIdleTimeout     = 10 * time.Minute
	DefaultMessageTimeout  = 30 * time.Second
	maxDescriptionSize     = 4 << 10
	maxLogsAnswerLineCount = 10000
)

// Option configures a Server.
type Option func(*config)

type config struct {
	logger *slog.Logger

	maxKeySize     int
	maxValueSize   int
	maxStorageSize int64

	logLines    int
	logLineSize int

	maxWasmSize   int
	maxUISize     int
	maxSchemaSize int

	maxConns int
	conn     rpcguard.Limits

	wasm []wasmhost.Option
}

func defaultConfig() config {
	lim := rpcguard.DefaultLimits()
	lim.MaxMessageSize = DefaultMaxMessageSize
	lim.MaxInFlight = DefaultMaxInFlight
	lim.MaxCapTable = DefaultMaxCapTable
	lim.IdleTimeout = DefaultIdleTimeout
	lim.MessageTimeout = DefaultMessageTimeout
	return config{
		logger:         slog.New(slog.DiscardHandler),
		maxKeySize:     DefaultMaxKeySize,
		maxValueSize:   DefaultMaxValueSize,
		maxStorageSize: DefaultMaxStorageSize,
		logLines:       DefaultLogLines,
		logLineSize:    DefaultLogLineSize,
		maxWasmSize:    DefaultMaxWasmSize,
		maxUISize:      DefaultMaxUISize,
		maxSchemaSize:  DefaultMaxSchemaSize,
		maxConns:       DefaultMaxConnections,
		conn:           lim,
	}
}

// WithLogger sets where the server logs. Default: nowhere.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithStorageLimits sets the per-gadget storage limits: the longest key and
// value, and the total of key and value bytes. Zero keeps a default.
func WithStorageLimits(maxKey, maxValue int, maxTotal int64) Option {
	return func(c *config) {
		c.maxKeySize = positiveOr(maxKey, c.maxKeySize)
		c.maxValueSize = positiveOr(maxValue, c.maxValueSize)
		c.maxStorageSize = positiveOr(maxTotal, c.maxStorageSize)
	}
}

// WithLogLimits sets how many lines of Host.log each gadget keeps and where a
// line is cut.
func WithLogLimits(lines, lineBytes int) Option {
	return func(c *config) {
		c.logLines = positiveOr(lines, c.logLines)
		c.logLineSize = positiveOr(lineBytes, c.logLineSize)
	}
}

// WithBlueprintLimits bounds the parts of a blueprint bundle.
func WithBlueprintLimits(maxWasm, maxUI, maxSchema int) Option {
	return func(c *config) {
		c.maxWasmSize = positiveOr(maxWasm, c.maxWasmSize)
		c.maxUISize = positiveOr(maxUI, c.maxUISize)
		c.maxSchemaSize = positiveOr(maxSchema, c.maxSchemaSize)
	}
}

// WithMaxConnections bounds concurrent Cap'n Proto connections; past it new
// connections are closed at once.
func WithMaxConnections(n int) Option {
	return func(c *config) { c.maxConns = positiveOr(n, c.maxConns) }
}

// WithMaxMessageSize bounds one incoming Cap'n Proto message.
func WithMaxMessageSize(bytes uint64) Option {
	return func(c *config) { c.conn.MaxMessageSize = positiveOr(bytes, c.conn.MaxMessageSize) }
}

// WithMaxInFlightCalls bounds the calls one connection may have running;
// past it calls fail with an "overloaded" exception.
func WithMaxInFlightCalls(n int) Option {
	return func(c *config) { c.conn.MaxInFlight = positiveOr(n, c.conn.MaxInFlight) }
}

// WithMaxCapTable bounds the capability table of one incoming message; a
// peer past it is disconnected.
func WithMaxCapTable(n int) Option {
	return func(c *config) { c.conn.MaxCapTable = positiveOr(n, c.conn.MaxCapTable) }
}

// WithConnTimeouts sets how long a connection may idle between messages and
// how long one message may take to arrive.
func WithConnTimeouts(idle, message time.Duration) Option {
	return func(c *config) {
		c.conn.IdleTimeout = positiveOr(idle, c.conn.IdleTimeout)
		c.conn.MessageTimeout = positiveOr(message, c.conn.MessageTimeout)
	}
}

// WithWasmOptions passes options to the sandbox runtime (memory, call
// timeout, queue length...). The server adds a compilation cache in the data
// directory.
func WithWasmOptions(opts ...wasmhost.Option) Option {
	return func(c *config) { c.wasm = append(c.wasm, opts...) }
}

func positiveOr[T int | int64 | uint64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

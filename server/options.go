package server

import (
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/desk"
	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/storage"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// Defaults for the limits a Server enforces. Each has an Option.
const (
	DefaultMaxKeySize     = storage.DefaultMaxKeyBytes
	DefaultMaxValueSize   = storage.DefaultMaxValueBytes
	DefaultMaxStorageSize = storage.DefaultMaxTotalBytes
	DefaultLogLines       = 1000
	DefaultLogLineSize    = 4 << 10
	DefaultMaxWasmSize    = 24 << 20
	DefaultMaxUISize      = 2 << 20
	DefaultMaxSchemaSize  = 2 << 20
	DefaultMaxConnections = rpcguard.DefaultMaxConns
	// One user may hold an eighth of the default connections: a browser
	// shell holds one, and one per gadget it has open.
	DefaultMaxConnectionsPerUser = 128
	DefaultMaxMessageSize        = 9 << 20 // a guest frame (8 MiB) and its envelope; blueprints are streamed
	DefaultMaxInFlight           = 512
	// A user's connections together may have two connections' worth of
	// calls in flight; all connections together four users' worth of
	// bytes (the process holds about four times that: ~2 GiB at worst).
	DefaultMaxInFlightPerUser      = 1024
	DefaultMaxInFlightBytesPerUser = 128 << 20
	DefaultMaxInFlightTotal        = 4096
	DefaultMaxInFlightBytesTotal   = 512 << 20
	DefaultMaxCapTable             = 256
	DefaultIdleTimeout             = 10 * time.Minute
	DefaultMessageTimeout          = 30 * time.Second
	maxDescriptionSize             = 4 << 10
	maxLogsAnswerLineCount         = 10000
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

	uploadsPerUser int    // open blueprint uploads per user (upload.go)
	uploadBytes    uint64 // bytes all open uploads may announce

	install installLimits // installqueue.go

	// Per-user quotas, per-call storage and log bounds, and what idle
	// gadgets keep (quotas.go, storage.go, host.go, shells.go).
	maxGadgetsPerUser, maxBlueprintVersionsPerUser int
	maxCallWrites                                  int
	maxCallBytes, maxListBytes                     int64
	logRate                                        float64
	logBurst, logBytes                             int
	maxIdleModules                                 int
	modules                                        moduleBudget // modulebudget.go
	idleShellTimeout                               time.Duration
	// returnMemory gives the Go heap's free pages back to the OS once idle
	// gadgets are let go (shells.go); nil keeps them.
	returnMemory func()

	frameTicketTTL         time.Duration // frameticket.go
	maxFrameTicketsPerUser int
	links                  store.LinkLimits // links.go
	maxSavedPerUser        int              // persistent.go

	// The gatekeepers (gatekeepers.go): the kinds the server knows, the
	// services the operator configured, and the desk's bounds.
	kinds    []gatekeepers.Kind
	services []desk.Service
	desk     []desk.Option
}

func defaultConfig() config {
	lim := rpcguard.DefaultLimits()
	lim.MaxMessageSize = DefaultMaxMessageSize
	lim.MaxInFlight = DefaultMaxInFlight
	lim.MaxUserInFlight, lim.MaxUserInFlightBytes = DefaultMaxInFlightPerUser, DefaultMaxInFlightBytesPerUser
	lim.MaxServerInFlight, lim.MaxServerInFlightBytes = DefaultMaxInFlightTotal, DefaultMaxInFlightBytesTotal
	lim.MaxCapTable = DefaultMaxCapTable
	lim.MaxUserConns = DefaultMaxConnectionsPerUser
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
		uploadsPerUser: DefaultUploadsPerUser,
		uploadBytes:    DefaultUploadBytes,
		install:        installLimits{concurrent: DefaultMaxCompiles, perUser: DefaultMaxCompilesPerUser, timeout: DefaultInstallTimeout},

		maxGadgetsPerUser:           DefaultMaxGadgetsPerUser,
		maxBlueprintVersionsPerUser: DefaultMaxBlueprintVersionsPerUser,
		maxCallWrites:               DefaultMaxCallWrites,
		maxCallBytes:                DefaultMaxCallBytes,
		maxListBytes:                DefaultMaxListBytes,
		logRate:                     DefaultLogRate,
		logBurst:                    DefaultLogBurst,
		logBytes:                    DefaultLogBytes,
		maxIdleModules:              DefaultMaxIdleModules,
		modules:                     moduleBudget{perUser: DefaultModuleMemoryPerUser, total: DefaultModuleMemoryTotal},
		idleShellTimeout:            DefaultIdleShellTimeout,
		returnMemory:                debug.FreeOSMemory,
		frameTicketTTL:              DefaultFrameTicketTTL,
		maxFrameTicketsPerUser:      DefaultMaxFrameTicketsPerUser,
		links:                       store.LinkLimits{PerGadget: DefaultMaxLinksPerGadget, PerCreator: DefaultMaxLinksPerUser},
		maxSavedPerUser:             DefaultMaxSavedPerUser,
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

// WithMaxInFlightPerUser bounds the calls, and the bytes of the messages
// that carried them, that all the connections of one logged-in user may have
// in flight together: opening more connections gains a user nothing. A call
// counts until its answer has been written to the socket, so answers that
// wait for a client that does not read keep counting. Past it calls fail
// with an "overloaded" exception naming the user. Zero keeps a default.
func WithMaxInFlightPerUser(calls int, bytes uint64) Option {
	return func(c *config) {
		c.conn.MaxUserInFlight = positiveOr(calls, c.conn.MaxUserInFlight)
		c.conn.MaxUserInFlightBytes = positiveOr(bytes, c.conn.MaxUserInFlightBytes)
	}
}

// WithMaxConnectionsPerUser bounds the connections one user may have
// logged in at once, so that no one user can take every connection the
// server has room for (WithMaxConnections). Past it, a login fails with an
// error that says so, and the connection is as if it had not logged in.
func WithMaxConnectionsPerUser(n int) Option {
	return func(c *config) { c.conn.MaxUserConns = positiveOr(n, c.conn.MaxUserConns) }
}

// WithMaxInFlightTotal bounds the calls, and their bytes, that all
// connections together may have in flight, counted like
// WithMaxInFlightPerUser: many users cannot add up past it. Past it calls
// fail with an "overloaded" exception naming the server. Zero keeps a
// default.
func WithMaxInFlightTotal(calls int, bytes uint64) Option {
	return func(c *config) {
		c.conn.MaxServerInFlight = positiveOr(calls, c.conn.MaxServerInFlight)
		c.conn.MaxServerInFlightBytes = positiveOr(bytes, c.conn.MaxServerInFlightBytes)
	}
}

// WithMaxReceiving bounds the bytes of messages still arriving (sent in
// part, not yet whole): on all the connections of one logged-in user
// together, and on all connections. Past the first, the user's next
// message closes its own connection with an error naming the per-user
// limit, so no one user can fill the server's budget; past the second,
// whoever's message would pass it. Zero keeps the default total (256 MiB);
// a zero perUser is a quarter of the total.
func WithMaxReceiving(perUser, total uint64) Option {
	return func(c *config) {
		c.conn.MaxReceiving = positiveOr(total, c.conn.MaxReceiving)
		c.conn.MaxUserReceiving = positiveOr(perUser, c.conn.MaxReceiving/4)
	}
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

// LoginLimits bound a Cap'n Proto connection until it logs in: a stranger
// may send only small messages, few at a time, must keep talking, and must
// log in soon. A zero field keeps its default (DefaultLoginLimits).
type LoginLimits struct {
	MaxMessageSize   uint64        // one incoming message
	MaxCallsInFlight int           // calls the server works on at once
	MaxCallBytes     uint64        // the message bytes of those calls
	IdleTimeout      time.Duration // between messages
	LoginTimeout     time.Duration // from connecting to logging in
	MaxPerAddress    int           // such connections from one address
	// MaxConns bounds such connections from all addresses together; a
	// newcomer past it takes the place of the oldest. Its default lets
	// them hold at most one user's share of the unfinished messages the
	// server receives (WithMaxReceiving): 1,024 at the default sizes.
	MaxConns int

	// LogRate (lines per second) and LogBurst bound the log lines about
	// such connections (refused, or cut off for a limit), all of them
	// together, so strangers cannot fill the log. Lines past them are
	// dropped, and one line every 10 s says how many. Lines about
	// connections that have logged in are never dropped.
	LogRate  float64
	LogBurst int
}

// DefaultLoginLimits are the LoginLimits of a server configured with none.
func DefaultLoginLimits() LoginLimits {
	u := rpcguard.DefaultLimits().Unauthenticated
	return LoginLimits{
		MaxMessageSize:   u.MaxMessageSize,
		MaxCallsInFlight: u.MaxInFlight,
		MaxCallBytes:     u.MaxInFlightBytes,
		IdleTimeout:      u.IdleTimeout,
		LoginTimeout:     u.LoginTimeout,
		MaxPerAddress:    u.MaxPerAddress,
		MaxConns:         int(rpcguard.DefaultLimits().MaxUserReceiving / u.MaxMessageSize),
		LogRate:          u.LogRate,
		LogBurst:         u.LogBurst,
	}
}

// WithLoginLimits sets the bounds of connections that have not logged in.
func WithLoginLimits(l LoginLimits) Option {
	return func(c *config) {
		u := &c.conn.Unauthenticated
		u.MaxMessageSize = positiveOr(l.MaxMessageSize, u.MaxMessageSize)
		u.MaxInFlight = positiveOr(l.MaxCallsInFlight, u.MaxInFlight)
		u.MaxInFlightBytes = positiveOr(l.MaxCallBytes, u.MaxInFlightBytes)
		u.IdleTimeout = positiveOr(l.IdleTimeout, u.IdleTimeout)
		u.LoginTimeout = positiveOr(l.LoginTimeout, u.LoginTimeout)
		u.MaxPerAddress = positiveOr(l.MaxPerAddress, u.MaxPerAddress)
		u.MaxConns = positiveOr(l.MaxConns, u.MaxConns)
		if l.LogRate > 0 {
			u.LogRate = l.LogRate
		}
		u.LogBurst = positiveOr(l.LogBurst, u.LogBurst)
	}
}

// WithWasmOptions passes options to the sandbox runtime (memory, call
// timeout, queue length...). The server adds a compilation cache in the data
// directory and an instance pool of 2 per blueprint, which these may
// override (wasmhost.WithInstancePool).
func WithWasmOptions(opts ...wasmhost.Option) Option {
	return func(c *config) { c.wasm = append(c.wasm, opts...) }
}

func positiveOr[T int | int64 | uint64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Defaults for per-user quotas and for what the server keeps for idle
// gadgets. Each has an Option below.
const (
	DefaultMaxGadgetsPerUser           = 100
	DefaultMaxBlueprintVersionsPerUser = 100
	DefaultMaxCallWrites               = storage.DefaultMaxCallWrites
	DefaultMaxCallBytes                = storage.DefaultMaxCallBytes
	DefaultMaxListBytes                = storage.DefaultMaxListBytes
	DefaultLogRate                     = 20.0
	DefaultLogBurst                    = 200
	DefaultLogBytes                    = 256 << 10
	DefaultMaxIdleModules              = 16
	DefaultIdleShellTimeout            = 30 * time.Second
	// DefaultInstancePool is how many started instances of each blueprint
	// in use the server keeps ready (wasmhost.WithInstancePool).
	DefaultInstancePool = 2
)

// WithUserQuotas bounds how many gadgets, and how many installed blueprint
// versions, one user may have. Past either, creating or installing fails
// with an error naming the limit.
func WithUserQuotas(gadgets, blueprintVersions int) Option {
	return func(c *config) {
		c.maxGadgetsPerUser = positiveOr(gadgets, c.maxGadgetsPerUser)
		c.maxBlueprintVersionsPerUser = positiveOr(blueprintVersions, c.maxBlueprintVersionsPerUser)
	}
}

// WithStorageCallLimits bounds what one call into a gadget may do with its
// storage: how many keys it may change (puts and deletes, of keys that exist
// or not), how many bytes its buffered writes may hold, and how many bytes
// of keys and values one Storage.list reads and answers.
func WithStorageCallLimits(writes int, bufferedBytes, listBytes int64) Option {
	return func(c *config) {
		c.maxCallWrites = positiveOr(writes, c.maxCallWrites)
		c.maxCallBytes = positiveOr(bufferedBytes, c.maxCallBytes)
		c.maxListBytes = positiveOr(listBytes, c.maxListBytes)
	}
}

// WithLogRateLimit sets each gadget's Host.log rate: linesPerSecond on
// average, in bursts of up to burst lines. Lines past it are dropped and
// counted, and one line in the log says how many.
func WithLogRateLimit(linesPerSecond float64, burst int) Option {
	return func(c *config) {
		if linesPerSecond > 0 {
			c.logRate = linesPerSecond
		}
		c.logBurst = positiveOr(burst, c.logBurst)
	}
}

// WithLogBytes bounds the bytes of log text each live gadget keeps, on top
// of the line count of WithLogLimits.
func WithLogBytes(n int) Option { return func(c *config) { c.logBytes = positiveOr(n, c.logBytes) } }

// WithMaxIdleModules bounds the compiled blueprints kept in memory that no
// live gadget uses; past it the least recently used is freed, and compiled
// again (from the compilation cache) when a gadget needs it.
func WithMaxIdleModules(n int) Option {
	return func(c *config) { c.maxIdleModules = positiveOr(n, c.maxIdleModules) }
}

// WithModuleMemory bounds the compiled blueprint code the server holds in
// memory (a module counts 24 bytes per byte of its wasm; builtins count
// nothing): perUser for the modules one user's live gadgets use, each
// counted once, and total for every loaded module, idle ones included.
// Starting a gadget past the total first frees idle modules, least recently
// used first; past either limit it fails with an "overloaded" exception
// naming it, and the server serves everyone else. Zero keeps a default
// (DefaultModuleMemoryPerUser, DefaultModuleMemoryTotal).
func WithModuleMemory(perUser, total int64) Option {
	return func(c *config) {
		c.modules.perUser = positiveOr(perUser, c.modules.perUser)
		c.modules.total = positiveOr(total, c.modules.total)
	}
}

// WithIdleShellTimeout sets how long the server keeps a gadget it has
// started (its sandbox worker, instance and log) once nothing holds a session
// of it and it has had no call: such gadgets are let go after about d, their
// instance with them, and started again on next use. (An instance whose
// session is still held stays until wasmhost.WithIdleTimeout.) The server
// looks every d/2; a d under MinIdleShellTimeout is raised to it.
func WithIdleShellTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.idleShellTimeout = max(d, MinIdleShellTimeout)
		}
	}
}

// MinIdleShellTimeout is the shortest WithIdleShellTimeout: below it the
// sweeps (and the memory returns after them) would cost more than the
// gadgets they let go.
const MinIdleShellTimeout = 10 * time.Millisecond

// WithReturnMemoryWhenIdle says whether the server gives the memory it no
// longer uses back to the operating system as soon as it lets idle gadgets
// go (debug.FreeOSMemory: a garbage collection and a release of the free
// heap, at most once per half WithIdleShellTimeout), rather than at the Go
// runtime's own pace, which kept hundreds of MiB for minutes after clients
// left. On by default; off saves those collections on a server whose load
// comes back soon anyway.
func WithReturnMemoryWhenIdle(on bool) Option {
	return func(c *config) {
		c.returnMemory = nil
		if on {
			c.returnMemory = debug.FreeOSMemory
		}
	}
}

// WithInstallLimits bounds the compiles of blueprint installs: at most
// concurrent at once on the server and at most perUser at once of one
// user's, taking turns in arrival order, so that one user's installs,
// however many and however costly, leave the other slots to everyone else.
// An install waiting for its turn gives up when its call is cancelled, or at
// its timeout (WithInstallTimeout). Zero keeps a default: DefaultMaxCompiles,
// DefaultMaxCompilesPerUser.
//
// What one compile may cost is bounded by the sandbox runtime's compile
// worker (wasmhost.WithCompileWorker, wasmhost.WithCompileLimits), which
// `gadgetd serve` configures; pass them with WithWasmOptions.
func WithInstallLimits(concurrent, perUser int) Option {
	return func(c *config) {
		c.install.concurrent = positiveOr(concurrent, c.install.concurrent)
		c.install.perUser = positiveOr(perUser, c.install.perUser)
	}
}

// WithInstallTimeout bounds how long one blueprint install may take, its
// wait for a turn to compile and its compile together. Past it the install
// fails: with an "overloaded" exception if it was still waiting for its
// turn, and otherwise with its compile cancelled and its worker killed. So
// however many costly installs arrive at once, each ends within d. Zero
// keeps DefaultInstallTimeout.
func WithInstallTimeout(d time.Duration) Option {
	return func(c *config) { c.install.timeout = positiveOr(d, c.install.timeout) }
}

// WithUploadLimits bounds blueprint uploads (Workspace.uploadBlueprint): at
// most perUser open at once for one user, and at most totalBytes announced
// by all open uploads together. Zero keeps a default: DefaultUploadsPerUser,
// DefaultUploadBytes.
func WithUploadLimits(perUser int, totalBytes uint64) Option {
	return func(c *config) {
		c.uploadsPerUser = positiveOr(perUser, c.uploadsPerUser)
		c.uploadBytes = positiveOr(totalBytes, c.uploadBytes)
	}
}

// WithMaxExports bounds the server's capabilities one connection may hold
// at once (each login, gadget, session or upload it was handed and has not
// released); past it the connection is closed.
func WithMaxExports(n int) Option {
	return func(c *config) { c.conn.MaxExports = positiveOr(n, c.conn.MaxExports) }
}

// WithGatekeepers gives the server the kinds of gatekeeper it knows
// (gatekeepers/kinds.All() has them all) and the services the operator
// configured, which gadgets can be bound to, with the desk's options
// (bounds of the audit log, the open actions, the bindings per gadget).
// Without it, no service exists, and no gadget can be bound to one.
func WithGatekeepers(kinds []gatekeepers.Kind, services []desk.Service, opts ...desk.Option) Option {
	return func(c *config) {
		c.kinds = slices.Clone(kinds)
		c.services = slices.Clone(services)
		c.desk = slices.Clone(opts)
	}
}

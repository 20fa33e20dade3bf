package main

import (
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/desk"
	"github.com/gadgetd/gadgetd/gatekeepers/kinds"
	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
	"github.com/gadgetd/gadgetd/web"
)

// serveConfig is what `gadgetd serve` runs with. Each field starts at its
// default (defaultServeConfig), a --config file (TOML, one key per field,
// docs/gadgetd.example.toml) overrides what it sets, and flags override the
// file. Every limit is a positive number: a key left out keeps its default
// (zero here for the few whose default depends on other keys).
type serveConfig struct {
	Data   string `toml:"data"`
	Listen struct {
		Capnp string `toml:"capnp"`
		HTTP  string `toml:"http"`
	} `toml:"listen"`
	TLS struct {
		Cert string `toml:"cert"`
		Key  string `toml:"key"`
	} `toml:"tls"`
	Websocket struct {
		// Unset, only the server's own pages may open websockets.
		AllowedOrigins     []origin `toml:"allowed_origins"`
		FrameTicketTTL     duration `toml:"frame_ticket_ttl"`
		MaxFrameTicketsPer count    `toml:"max_frame_tickets_per_user"`
	} `toml:"websocket"`

	Connections struct {
		Max                count    `toml:"max"`
		MaxMessageSize     size     `toml:"max_message_size"`
		MaxCallsInFlight   count    `toml:"max_calls_in_flight"`
		MaxCapsPerMessage  count    `toml:"max_caps_per_message"`
		MaxCapsHeld        count    `toml:"max_capabilities_held"`
		TotalCallsInFlight count    `toml:"total_calls_in_flight"`
		TotalCallBytes     size     `toml:"total_call_bytes_in_flight"`
		IdleTimeout        duration `toml:"idle_timeout"`
		MessageTimeout     duration `toml:"message_timeout"`
	} `toml:"connections"`
	Logins struct {
		MaxMessageSize   size     `toml:"max_message_size"`
		MaxCallsInFlight count    `toml:"max_calls_in_flight"`
		MaxCallBytes     size     `toml:"max_call_bytes_in_flight"`
		IdleTimeout      duration `toml:"idle_timeout"`
		LoginTimeout     duration `toml:"login_timeout"`
		MaxPerAddress    count    `toml:"max_per_address"`
		MaxConns         count    `toml:"max_connections"`
		LogRate          rate     `toml:"log_rate"`
		LogBurst         count    `toml:"log_burst"`
	} `toml:"logins"`
	Users struct {
		MaxConnections       count `toml:"max_connections"`
		MaxGadgets           count `toml:"max_gadgets"`
		MaxBlueprintVersions count `toml:"max_blueprint_versions"`
		MaxLinks             count `toml:"max_links"`
		MaxSaved             count `toml:"max_saved"`
		MaxCallsInFlight     count `toml:"max_calls_in_flight"`
		MaxCallBytes         size  `toml:"max_call_bytes_in_flight"`
	} `toml:"users"`
	Installs struct {
		MaxConcurrent count    `toml:"max_concurrent"`
		MaxPerUser    count    `toml:"max_per_user"`
		Timeout       duration `toml:"timeout"`
		CompileCPU    duration `toml:"compile_cpu_time"`
		CompileMemory size     `toml:"compile_memory"`
	} `toml:"installs"`
	Uploads struct {
		MaxPerUser count `toml:"max_per_user"`
		MaxTotal   size  `toml:"max_total_size"`
	} `toml:"uploads"`
	Blueprints struct {
		MaxWasmSize   size `toml:"max_wasm_size"`
		MaxUISize     size `toml:"max_ui_size"`
		MaxSchemaSize size `toml:"max_schema_size"`
	} `toml:"blueprints"`
	Storage struct {
		MaxKeySize         size  `toml:"max_key_size"`
		MaxValueSize       size  `toml:"max_value_size"`
		MaxTotalSize       size  `toml:"max_total_size"`
		MaxWritesPerCall   count `toml:"max_writes_per_call"`
		MaxBufferedPerCall size  `toml:"max_buffered_per_call"`
		MaxListSize        size  `toml:"max_list_size"`
	} `toml:"storage"`
	Gadgets struct {
		Memory            size     `toml:"memory"`
		MemoryBudget      size     `toml:"memory_budget"`
		CallTimeout       duration `toml:"call_timeout"`
		ClientCallTimeout duration `toml:"client_call_timeout"`
		QueueLimit        count    `toml:"queue_limit"`
		IdleTimeout       duration `toml:"idle_timeout"`
		MaxLive           count    `toml:"max_live"`
		IdleRelease       duration `toml:"idle_release"`
		IdleModules       count    `toml:"idle_modules"`
		ModuleMemory      size     `toml:"module_memory"`
		ModuleMemoryTotal size     `toml:"module_memory_total"`
		MaxLinks          count    `toml:"max_links"`
		Pool              poolSize `toml:"pool"`
		// Unset, one user's gadgets share half the budget (wasmhost).
		MemoryShare size `toml:"memory_share"`
	} `toml:"gadgets"`
	// Services are the services gadgets can be bound to, by name:
	// [services.NAME] with kind, description and the kind's own keys.
	Services    map[string]serviceTable `toml:"services"`
	Gatekeepers struct {
		MaxAuditEntries count `toml:"max_audit_entries"`
		MaxOpenActions  count `toml:"max_open_actions"`
		MaxBindings     count `toml:"max_bindings_per_gadget"`
	} `toml:"gatekeepers"`
	Logs struct {
		Lines    count `toml:"lines"`
		LineSize size  `toml:"line_size"`
		Bytes    size  `toml:"bytes"`
		Rate     rate  `toml:"rate"`
		Burst    count `toml:"burst"`
	} `toml:"logs"`
}

// defaultServeConfig is the configuration with no file and no flags: the
// server's and the sandbox's own defaults.
func defaultServeConfig() serveConfig {
	var c serveConfig
	c.Data = "./gadgetd-data"
	c.Listen.Capnp, c.Listen.HTTP = "127.0.0.1:7071", "127.0.0.1:7070"

	n, s, d := &c.Connections, &c.Users, &c.Installs
	n.Max, n.MaxMessageSize, n.MaxCallsInFlight = server.DefaultMaxConnections, server.DefaultMaxMessageSize, server.DefaultMaxInFlight
	n.MaxCapsPerMessage, n.MaxCapsHeld = server.DefaultMaxCapTable, count(rpcguard.DefaultLimits().MaxExports)
	n.TotalCallsInFlight, n.TotalCallBytes = server.DefaultMaxInFlightTotal, server.DefaultMaxInFlightBytesTotal
	n.IdleTimeout, n.MessageTimeout = duration(server.DefaultIdleTimeout), duration(server.DefaultMessageTimeout)
	s.MaxConnections, s.MaxGadgets, s.MaxBlueprintVersions = server.DefaultMaxConnectionsPerUser, server.DefaultMaxGadgetsPerUser, server.DefaultMaxBlueprintVersionsPerUser
	s.MaxLinks, s.MaxSaved = server.DefaultMaxLinksPerUser, server.DefaultMaxSavedPerUser
	s.MaxCallsInFlight, s.MaxCallBytes = server.DefaultMaxInFlightPerUser, server.DefaultMaxInFlightBytesPerUser
	d.MaxConcurrent, d.MaxPerUser, d.Timeout = server.DefaultMaxCompiles, server.DefaultMaxCompilesPerUser, duration(server.DefaultInstallTimeout)
	d.CompileCPU, d.CompileMemory = duration(wasmhost.DefaultCompileCPUTime), wasmhost.DefaultCompileMemory

	c.Websocket.FrameTicketTTL, c.Websocket.MaxFrameTicketsPer = duration(server.DefaultFrameTicketTTL), server.DefaultMaxFrameTicketsPerUser
	l, ld := &c.Logins, server.DefaultLoginLimits()
	l.MaxMessageSize, l.MaxCallsInFlight, l.MaxCallBytes = size(ld.MaxMessageSize), count(ld.MaxCallsInFlight), size(ld.MaxCallBytes)
	l.IdleTimeout, l.LoginTimeout, l.MaxPerAddress, l.MaxConns = duration(ld.IdleTimeout), duration(ld.LoginTimeout), count(ld.MaxPerAddress), count(ld.MaxConns)
	l.LogRate, l.LogBurst = rate(ld.LogRate), count(ld.LogBurst)
	c.Uploads.MaxPerUser, c.Uploads.MaxTotal = server.DefaultUploadsPerUser, server.DefaultUploadBytes
	b := &c.Blueprints
	b.MaxWasmSize, b.MaxUISize, b.MaxSchemaSize = server.DefaultMaxWasmSize, server.DefaultMaxUISize, server.DefaultMaxSchemaSize
	st := &c.Storage
	st.MaxKeySize, st.MaxValueSize, st.MaxTotalSize = server.DefaultMaxKeySize, server.DefaultMaxValueSize, server.DefaultMaxStorageSize
	st.MaxWritesPerCall, st.MaxBufferedPerCall, st.MaxListSize = server.DefaultMaxCallWrites, server.DefaultMaxCallBytes, server.DefaultMaxListBytes
	g := &c.Gadgets
	g.Memory, g.MemoryBudget = wasmhost.DefaultMemoryLimit, wasmhost.DefaultMemoryBudget
	g.CallTimeout, g.ClientCallTimeout = duration(wasmhost.DefaultCallTimeout), duration(wasmhost.DefaultClientCallTimeout)
	g.QueueLimit, g.IdleTimeout, g.MaxLive = wasmhost.DefaultQueueLimit, duration(wasmhost.DefaultIdleTimeout), wasmhost.DefaultMaxLive
	g.IdleRelease, g.IdleModules = duration(server.DefaultIdleShellTimeout), server.DefaultMaxIdleModules
	g.ModuleMemory, g.ModuleMemoryTotal = server.DefaultModuleMemoryPerUser, server.DefaultModuleMemoryTotal
	g.Pool = server.DefaultInstancePool
	g.MaxLinks = server.DefaultMaxLinksPerGadget
	gk := &c.Gatekeepers
	gk.MaxAuditEntries, gk.MaxOpenActions, gk.MaxBindings = desk.DefaultMaxAuditEntries, desk.DefaultMaxOpenActions, desk.DefaultMaxBindings
	lg := &c.Logs
	lg.Lines, lg.LineSize, lg.Bytes = server.DefaultLogLines, server.DefaultLogLineSize, server.DefaultLogBytes
	lg.Rate, lg.Burst = server.DefaultLogRate, server.DefaultLogBurst
	return c
}

// loadConfig returns the defaults overridden by the TOML file at path, if
// path is not empty. A key the configuration does not have is an error that
// names it: a misspelt limit must not silently keep its default.
func loadConfig(path string) (serveConfig, error) {
	c := defaultServeConfig()
	if path == "" {
		return c, nil
	}
	md, err := toml.DecodeFile(path, &c)
	if err != nil {
		return c, fmt.Errorf("--config %s: %w", path, err)
	}
	if unknown := md.Undecoded(); len(unknown) > 0 {
		keys := make([]string, len(unknown))
		for i, k := range unknown {
			keys[i] = k.String()
		}
		return c, fmt.Errorf("--config %s: unknown key %s (docs/gadgetd.example.toml lists every key)", path, strings.Join(keys, ", "))
	}
	if d := time.Duration(c.Gadgets.IdleRelease); d < minIdleRelease {
		return c, fmt.Errorf("--config %s: gadgets.idle_release: want at least %v, got %v", path, minIdleRelease, d)
	}
	return c, nil
}

// minIdleRelease is the shortest gadgets.idle_release: the server looks for
// idle gadgets every half of it, and hands memory back after each sweep
// that let one go.
const minIdleRelease = time.Second

// serverOptions maps the limits to the server's options, one line each.
func (c *serveConfig) serverOptions() []server.Option {
	n, u, i, up, b, s, g := &c.Connections, &c.Users, &c.Installs, &c.Uploads, &c.Blueprints, &c.Storage, &c.Gadgets
	l, lg, gk := &c.Logins, &c.Logs, &c.Gatekeepers
	return []server.Option{
		server.WithMaxConnections(int(n.Max)),
		server.WithFrameTickets(time.Duration(c.Websocket.FrameTicketTTL), int(c.Websocket.MaxFrameTicketsPer)),
		server.WithMaxMessageSize(uint64(n.MaxMessageSize)),
		server.WithMaxInFlightCalls(int(n.MaxCallsInFlight)),
		server.WithMaxCapTable(int(n.MaxCapsPerMessage)),
		server.WithMaxExports(int(n.MaxCapsHeld)),
		server.WithMaxInFlightTotal(int(n.TotalCallsInFlight), uint64(n.TotalCallBytes)),
		server.WithConnTimeouts(time.Duration(n.IdleTimeout), time.Duration(n.MessageTimeout)),
		server.WithLoginLimits(server.LoginLimits{
			MaxMessageSize:   uint64(l.MaxMessageSize),
			MaxCallsInFlight: int(l.MaxCallsInFlight),
			MaxCallBytes:     uint64(l.MaxCallBytes),
			IdleTimeout:      time.Duration(l.IdleTimeout),
			LoginTimeout:     time.Duration(l.LoginTimeout),
			MaxPerAddress:    int(l.MaxPerAddress),
			MaxConns:         int(l.MaxConns),
			LogRate:          float64(l.LogRate),
			LogBurst:         int(l.LogBurst),
		}),
		server.WithUserQuotas(int(u.MaxGadgets), int(u.MaxBlueprintVersions)),
		server.WithMaxConnectionsPerUser(int(u.MaxConnections)),
		server.WithLinkLimits(int(g.MaxLinks), int(u.MaxLinks)),
		server.WithMaxSavedPerUser(int(u.MaxSaved)),
		server.WithMaxInFlightPerUser(int(u.MaxCallsInFlight), uint64(u.MaxCallBytes)),
		server.WithInstallLimits(int(i.MaxConcurrent), int(i.MaxPerUser)),
		server.WithInstallTimeout(time.Duration(i.Timeout)),
		server.WithUploadLimits(int(up.MaxPerUser), uint64(up.MaxTotal)),
		server.WithBlueprintLimits(int(b.MaxWasmSize), int(b.MaxUISize), int(b.MaxSchemaSize)),
		server.WithStorageLimits(int(s.MaxKeySize), int(s.MaxValueSize), int64(s.MaxTotalSize)),
		server.WithStorageCallLimits(int(s.MaxWritesPerCall), int64(s.MaxBufferedPerCall), int64(s.MaxListSize)),
		server.WithIdleShellTimeout(time.Duration(g.IdleRelease)),
		server.WithMaxIdleModules(int(g.IdleModules)),
		server.WithModuleMemory(int64(g.ModuleMemory), int64(g.ModuleMemoryTotal)),
		server.WithLogLimits(int(lg.Lines), int(lg.LineSize)),
		server.WithLogBytes(int(lg.Bytes)),
		server.WithLogRateLimit(float64(lg.Rate), int(lg.Burst)),
		server.WithGatekeepers(kinds.All(), c.gatekeeperServices(),
			desk.WithMaxAuditEntries(int(gk.MaxAuditEntries)),
			desk.WithMaxOpenActions(int(gk.MaxOpenActions)),
			desk.WithMaxBindings(int(gk.MaxBindings))),
		server.WithWasmOptions(
			wasmhost.WithMemoryLimit(uint64(g.Memory)),
			wasmhost.WithMemoryBudget(uint64(g.MemoryBudget)),
			wasmhost.WithCallTimeout(time.Duration(g.CallTimeout)),
			wasmhost.WithClientCallTimeout(time.Duration(g.ClientCallTimeout)),
			wasmhost.WithQueueLimit(int(g.QueueLimit)),
			wasmhost.WithIdleTimeout(time.Duration(g.IdleTimeout)),
			wasmhost.WithMaxLiveInstances(int(g.MaxLive)),
			wasmhost.WithMemoryShare(uint64(g.MemoryShare)),
			wasmhost.WithInstancePool(int(g.Pool)),
			wasmhost.WithCompileLimits(time.Duration(i.CompileCPU), uint64(i.CompileMemory)),
		),
	}
}

// The value types of the file. Each refuses what no limit can be, so a
// wrong value fails at load with the key it belongs to.
type (
	// count is a positive whole number.
	count int
	// size is a positive number of bytes: an integer, or a string with a
	// unit: "512", "64KiB", "9MiB", "2GiB".
	size int64
	// duration is a positive Go duration string: "30s", "10m", "1h30m".
	duration time.Duration
	// rate is a positive number of events per second: 20, or 0.5.
	rate float64
	// poolSize is how many started instances of each blueprint in use
	// are kept ready: 0 (none) to maxPool.
	poolSize int
	// origin is a web origin, "https://host[:port]", in the form
	// web.ParseOrigin gives.
	origin string
)

func (o *origin) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf(`want an origin such as "https://gadgets.example.com", got %v`, v)
	}
	canonical, err := web.ParseOrigin(s)
	if err != nil {
		return err
	}
	*o = origin(canonical)
	return nil
}

// webOptions maps the configuration of the HTTP listener's websockets to
// web's options.
func (c *serveConfig) webOptions() []web.Option {
	origins := make([]string, len(c.Websocket.AllowedOrigins))
	for i, o := range c.Websocket.AllowedOrigins {
		origins[i] = string(o)
	}
	return []web.Option{web.WithAllowedOrigins(origins...)}
}

// maxValue bounds a count, so it fits an int on any platform. Sizes are
// bounded by maxSize.
const (
	maxValue = math.MaxInt32
	maxSize  = 1 << 40
)

func (c *count) UnmarshalTOML(v any) error {
	n, ok := v.(int64)
	if !ok || n < 1 || n > maxValue {
		return fmt.Errorf("want a whole number from 1 to %d, got %v", maxValue, v)
	}
	*c = count(n)
	return nil
}

// maxPool bounds gadgets.pool: each pooled instance holds a Go guest's
// few MiB of the memory budget, so a larger pool mostly takes memory.
const maxPool = 64

func (p *poolSize) UnmarshalTOML(v any) error {
	n, ok := v.(int64)
	if !ok || n < 0 || n > maxPool {
		return fmt.Errorf("want a whole number from 0 (no pool) to %d, got %v", maxPool, v)
	}
	*p = poolSize(n)
	return nil
}

var sizeUnits = []struct {
	suffix string
	bytes  int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}, {"", 1}}

func (s *size) UnmarshalTOML(v any) error {
	n, err := parseSize(v)
	if err != nil {
		return fmt.Errorf(`want a size from 1 byte to 1TiB, such as 4096 or "64MiB": %w`, err)
	}
	*s = size(n)
	return nil
}

func parseSize(v any) (int64, error) {
	var n int64
	switch v := v.(type) {
	case int64:
		n = v
	case string:
		for _, u := range sizeUnits {
			if digits, ok := strings.CutSuffix(v, u.suffix); ok {
				d, err := strconv.ParseInt(strings.TrimSpace(digits), 10, 64)
				if err != nil || d > maxSize/u.bytes {
					return 0, fmt.Errorf("got %q", v)
				}
				n = d * u.bytes
				break
			}
		}
	default:
		return 0, fmt.Errorf("got %v", v)
	}
	if n < 1 || n > maxSize {
		return 0, fmt.Errorf("got %v", v)
	}
	return n, nil
}

func (d *duration) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf(`want a duration such as "30s" or "10m", got %v`, v)
	}
	t, err := time.ParseDuration(s)
	if err != nil || t <= 0 {
		return fmt.Errorf(`want a positive duration such as "30s" or "10m", got %q`, s)
	}
	*d = duration(t)
	return nil
}

func (r *rate) UnmarshalTOML(v any) error {
	var f float64
	switch v := v.(type) {
	case int64:
		f = float64(v)
	case float64:
		f = v
	default:
		return fmt.Errorf("want a positive number per second, such as 20 or 0.5, got %v", v)
	}
	if !(f > 0 && f <= maxValue) {
		return fmt.Errorf("want a positive number per second, such as 20 or 0.5, got %v", v)
	}
	*r = rate(f)
	return nil
}

// serviceTable is one [services.NAME]: its kind, its description, and the
// kind's own keys, which the kind checks when the server starts.
type serviceTable struct {
	Kind, Description string
	Settings          map[string]any
}

func (t *serviceTable) UnmarshalTOML(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("a service is a table, [services.NAME], not %T", v)
	}
	settings := maps.Clone(m)
	kind, ok := settings["kind"].(string)
	if !ok || kind == "" {
		return fmt.Errorf("a service needs kind = \"KIND\" (%s)", strings.Join(kindNames(), ", "))
	}
	delete(settings, "kind")
	if d, ok := settings["description"]; ok {
		if t.Description, ok = d.(string); !ok {
			return fmt.Errorf("a service's description is a string, not %T", d)
		}
		delete(settings, "description")
	}
	t.Kind, t.Settings = kind, settings
	return nil
}

func kindNames() []string {
	var names []string
	for _, k := range kinds.All() {
		names = append(names, k.Name)
	}
	return names
}

// gatekeeperServices are the configured services, for the server, in
// name order; secrets are read from the server's environment.
func (c *serveConfig) gatekeeperServices() []desk.Service {
	out := make([]desk.Service, 0, len(c.Services))
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		t := c.Services[name]
		out = append(out, desk.Service{Name: name, Kind: t.Kind, Config: gatekeepers.ServiceConfig{
			Description: t.Description, Settings: t.Settings, Getenv: os.Getenv,
		}})
	}
	return out
}

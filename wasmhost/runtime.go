package wasmhost

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/gadgetd/gadgetd/wasmhost/internal/wasmcheck"
)

// Runtime compiles guest modules and runs gadget instances. One per server;
// safe for concurrent use.
type Runtime struct {
	cfg     config
	wz      wazero.Runtime
	cache   wazero.CompilationCache
	live    liveSet
	gadgets gadgetSet // not yet closed, for Close

	compiles compileSet // in flight, for Close
}

// New creates a Runtime.
func New(ctx context.Context, opts ...Option) (*Runtime, error) {
	cfg := config{
		memoryLimit: DefaultMemoryLimit,
		callTimeout: DefaultCallTimeout,
		queueLimit:  DefaultQueueLimit,
		idleTimeout: DefaultIdleTimeout,
		maxLive:     DefaultMaxLive,
		maxFrame:    DefaultMaxFrameSize,
		maxCapTable: DefaultMaxCapTable,
		maxImports:  DefaultMaxImports,

		closeTimeout:      DefaultCloseTimeout,
		clientCallTimeout: DefaultClientCallTimeout,
		memoryBudget:      DefaultMemoryBudget,

		compileCPUTime: DefaultCompileCPUTime,
		compileMemory:  DefaultCompileMemory,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.memoryLimit < wasmPageSize || cfg.callTimeout <= 0 || cfg.queueLimit < 1 || cfg.idleTimeout <= 0 || cfg.maxLive < 1 {
		return nil, fmt.Errorf("wasmhost: invalid limits: memory %d bytes, call timeout %v, queue %d, idle timeout %v, live instances %d",
			cfg.memoryLimit, cfg.callTimeout, cfg.queueLimit, cfg.idleTimeout, cfg.maxLive)
	}
	if cfg.instancePool < 0 {
		return nil, fmt.Errorf("wasmhost: invalid instance pool of %d instances", cfg.instancePool)
	}
	if cfg.closeTimeout <= 0 || cfg.clientCallTimeout <= 0 || cfg.memoryBudget < cfg.memoryLimit {
		return nil, fmt.Errorf("wasmhost: invalid limits: close timeout %v, client call timeout %v, memory budget %d bytes (at least the memory limit, %d)",
			cfg.closeTimeout, cfg.clientCallTimeout, cfg.memoryBudget, cfg.memoryLimit)
	}
	if cfg.memoryShare == 0 {
		cfg.memoryShare = max(cfg.memoryBudget/2, cfg.memoryLimit)
	}
	if cfg.memoryShare < cfg.memoryLimit || cfg.memoryShare > cfg.memoryBudget {
		return nil, fmt.Errorf("wasmhost: invalid limits: memory share %d bytes (at least the memory limit, %d, and at most the budget, %d)",
			cfg.memoryShare, cfg.memoryLimit, cfg.memoryBudget)
	}
	if cfg.compileWorker != nil && cfg.cacheDir == "" {
		return nil, fmt.Errorf("wasmhost: a compile worker fills the compilation cache: it needs WithCompilationCacheDir")
	}
	rc, cache, err := wazeroConfig(cfg)
	if err != nil {
		return nil, err
	}
	r := &Runtime{cfg: cfg, cache: cache}
	r.live.max = cfg.maxLive
	r.live.budget = cfg.memoryBudget
	r.live.share = cfg.memoryShare
	r.live.owners = map[string]uint64{}
	r.live.freed = make(chan struct{})
	r.live.pools = map[*instancePool]struct{}{}
	r.wz = wazero.NewRuntimeWithConfig(ctx, rc)
	if err := instantiateWASI(ctx, r.wz); err != nil {
		r.wz.Close(ctx)
		return nil, fmt.Errorf("wasmhost: wasi: %w", err)
	}
	if err := instantiateHostModule(ctx, r.wz); err != nil {
		r.wz.Close(ctx)
		return nil, fmt.Errorf("wasmhost: host module: %w", err)
	}
	return r, nil
}

// wazeroConfig is the wazero configuration of a Runtime, and of its compile
// worker, which must compile exactly the code the Runtime would (see
// compileworker.go). cache is nil without a cache directory.
func wazeroConfig(cfg config) (rc wazero.RuntimeConfig, cache wazero.CompilationCache, err error) {
	rc = wazero.NewRuntimeConfig().
		// Without this a guest spinning in a loop never yields to the
		// deadline, and a spinning goroutine stalls Go's GC for the whole
		// server (measured; docs/BENCHMARKS.md).
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(uint32(cfg.memoryLimit / wasmPageSize))
	if cfg.cacheDir == "" {
		return rc, nil, nil
	}
	// wazero keys cached code by module, wazero version and CPU, not by
	// runtime config: code compiled without the termination checks
	// WithCloseOnContextDone adds would ignore deadlines. Keep ours
	// apart, private: whoever can write it can run code in the server.
	dir := filepath.Join(cfg.cacheDir, "wasmhost-v1-close-on-context-done")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("wasmhost: compilation cache: %w", err)
	}
	if cache, err = wazero.NewCompilationCacheWithDir(dir); err != nil {
		return nil, nil, fmt.Errorf("wasmhost: compilation cache: %w", err)
	}
	return rc.WithCompilationCache(cache), cache, nil
}

// Close cancels the compiles in flight (see WithCompileWorker) and waits
// for them until ctx ends, closes every module's instance pool
// (WithInstancePool) and every gadget still open, all at once, each within
// WithCloseTimeout (see Sandbox.Close), and frees compiled code.
func (r *Runtime) Close(ctx context.Context) error {
	// wazero panics if its runtime is closed under a compile.
	stuck := r.compiles.close(ctx)
	r.live.mu.Lock()
	pools := make([]*instancePool, 0, len(r.live.pools))
	for p := range r.live.pools {
		pools = append(pools, p)
	}
	r.live.mu.Unlock()
	for _, p := range pools {
		p.close()
	}
	var wg sync.WaitGroup
	for _, g := range r.gadgets.all() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.Close()
		}()
	}
	wg.Wait()
	if stuck != nil {
		return stuck
	}
	err := r.wz.Close(ctx)
	if r.cache != nil {
		r.cache.Close(ctx)
	}
	return err
}

// Module is one compiled guest (one blueprint version), shared by all its
// gadgets.
type Module struct {
	rt   *Runtime
	cm   wazero.CompiledModule
	pool *instancePool // nil without WithInstancePool
}

// The guest ABI, version 1 (docs/ABI.md).
const (
	exportInit    = "_initialize"
	exportAlloc   = "gadgetd_alloc"
	exportDeliver = "gadgetd_deliver"
	hostModule    = "gadgetd"
	importExch    = "exchange"
	importTake    = "take"
	importRelease = "release"
	wasiModule    = wasi_snapshot_preview1.ModuleName
	wasmPageSize  = 65536
)

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64

	requiredExports = []struct {
		name           string
		params, result []api.ValueType
	}{
		{exportInit, nil, nil},
		{exportAlloc, []api.ValueType{i32}, []api.ValueType{i32}},
		{exportDeliver, []api.ValueType{i32, i32}, []api.ValueType{i64}},
	}
)

// Compile validates wasm as a gadget guest (it must be a wasip1 reactor that
// exports the ABI in docs/ABI.md) and compiles it. The error says precisely
// what is wrong. With WithCompileWorker, compiling happens in a child
// process under its budgets (unless the module is Trusted), and ends when
// ctx does; Close cancels the compiles in flight.
func (r *Runtime) Compile(ctx context.Context, wasm []byte, opts ...CompileOption) (*Module, error) {
	var cc compileConfig
	for _, o := range opts {
		o(&cc)
	}
	ctx, done, err := r.compiles.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		return nil, fmt.Errorf("not a WebAssembly module: it does not start with the \\0asm magic bytes")
	}
	// wazero's decoder and compiler trust the counts a module declares:
	// bound them before wazero sees the bytes.
	if err := wasmcheck.Check(wasm, wasmcheck.Limits(r.cfg.moduleLimits)); err != nil {
		return nil, fmt.Errorf("invalid WebAssembly module: %w", err)
	}
	if r.cfg.compileWorker != nil && !cc.trusted {
		// The worker leaves the code in the cache, where the compile below
		// finds it.
		if err := r.compileInWorker(ctx, wasm); err != nil {
			return nil, err
		}
	}
	cm, err := r.wz.CompileModule(ctx, wasm)
	if err != nil {
		return nil, fmt.Errorf("invalid WebAssembly module: %w", err)
	}
	if err := r.validate(cm); err != nil {
		cm.Close(ctx)
		return nil, err
	}
	m := &Module{rt: r, cm: cm}
	if r.cfg.instancePool > 0 {
		m.pool = newInstancePool(m, r.cfg.instancePool)
	}
	return m, nil
}

func (r *Runtime) validate(cm wazero.CompiledModule) error {
	if _, ok := cm.ExportedMemories()["memory"]; !ok {
		return fmt.Errorf("guest does not export its memory as \"memory\"")
	}
	exports := cm.ExportedFunctions()
	for _, want := range requiredExports {
		def, ok := exports[want.name]
		if !ok {
			return fmt.Errorf("guest does not export %q: a gadget must be a wasip1 reactor (GOOS=wasip1 go build -buildmode=c-shared) that imports github.com/gadgetd/gadgetd/guest, or implement docs/ABI.md", want.name)
		}
		if !sameTypes(def.ParamTypes(), want.params) || !sameTypes(def.ResultTypes(), want.result) {
			return fmt.Errorf("guest export %q has signature %s, want %s", want.name, signature(def.ParamTypes(), def.ResultTypes()), signature(want.params, want.result))
		}
	}
	wasi := r.wz.Module(wasiModule).ExportedFunctionDefinitions()
	for _, def := range cm.ImportedFunctions() {
		mod, name, _ := def.Import()
		var params, results []api.ValueType
		switch mod {
		case wasiModule:
			w, ok := wasi[name]
			if !ok {
				return fmt.Errorf("guest imports %s.%s, which WASI preview 1 does not have", mod, name)
			}
			params, results = w.ParamTypes(), w.ResultTypes()
		case hostModule:
			f, ok := hostFunctions[name]
			if !ok {
				return fmt.Errorf("guest imports unknown host function %s.%s", mod, name)
			}
			params, results = f.params, f.result
		default:
			return fmt.Errorf("guest imports %s.%s: only %q and %q are provided", mod, name, wasiModule, hostModule)
		}
		if !sameTypes(def.ParamTypes(), params) || !sameTypes(def.ResultTypes(), results) {
			return fmt.Errorf("guest imports %s.%s with signature %s, want %s", mod, name, signature(def.ParamTypes(), def.ResultTypes()), signature(params, results))
		}
	}
	return nil
}

func sameTypes(a, b []api.ValueType) bool { return bytes.Equal(a, b) }

func signature(params, results []api.ValueType) string {
	name := func(ts []api.ValueType) string {
		var b bytes.Buffer
		b.WriteByte('(')
		for i, t := range ts {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(api.ValueTypeName(t))
		}
		b.WriteByte(')')
		return b.String()
	}
	return name(params) + " -> " + name(results)
}

// Close closes the module's pooled instances (WithInstancePool) and frees
// the compiled code. Gadgets of this module must be closed first.
func (m *Module) Close(ctx context.Context) error {
	if m.pool != nil {
		m.pool.close()
	}
	return m.cm.Close(ctx)
}

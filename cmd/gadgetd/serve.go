package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/connlimit"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
	"github.com/gadgetd/gadgetd/web"
)

// devUser is the user `serve --dev` logs in, with the token kept in the
// data directory's devTokenFile.
const (
	devUser      = "demo"
	devTokenFile = "dev-token"
)

// The HTTP listener's bounds: connections open at once, in all and from one
// address (an IPv6 /64). The front page needs few; a browser opens about 6.
const (
	httpMaxConns        = 512
	httpMaxConnsPerHost = 32
)

// fdReserve is the open files the server needs besides its Cap'n Proto
// and websocket connections: the HTTP listener's, and a margin for the
// store, compile workers and the listeners themselves.
const fdReserve = httpMaxConns + 256

// fitConnections checks that cfg's connections.max connections fit the
// process's open-file limit, next to fdReserve: past it, accepting fails
// for everyone rather than one newcomer being told the server is busy. The
// default is lowered to fit, with a notice; a configured value that does
// not fit is an error. A limit of 0 is unknown, and not checked.
func fitConnections(cfg *serveConfig, limit uint64, notice io.Writer) error {
	want := uint64(cfg.Connections.Max) + fdReserve
	if limit == 0 || want <= limit {
		return nil
	}
	fit := int64(limit) - fdReserve
	if cfg.Connections.Max != server.DefaultMaxConnections || fit < 64 {
		return fmt.Errorf("connections.max %d needs about %d open files (%d more for HTTP, the store and compiles), but this process may open %d (ulimit -n): raise that limit (LimitNOFILE= in a systemd unit) or lower connections.max",
			cfg.Connections.Max, want, fdReserve, limit)
	}
	fmt.Fprintf(notice, "gadgetd: connections.max lowered from its default %d to %d, to fit the open-file limit of %d (ulimit -n)\n", cfg.Connections.Max, fit, limit)
	cfg.Connections.Max = count(fit)
	return nil
}

// serveHelp is what `gadgetd serve --help` says beyond the flags.
const serveHelp = `It listens for Cap'n Proto clients on 127.0.0.1:7071 and for HTTP on
127.0.0.1:7070, and keeps its store and compilation cache in ./gadgetd-data.
--config FILE reads these and the server's limits and quotas from a TOML file
(docs/gadgetd.example.toml shows every key with its default); a flag given on
the command line overrides the file. A start that fails (a port in use, a bad
TLS file, a bad configuration) leaves no new data directory behind.
`

// serveFlags are the flags of serve that override a key of the --config
// file, each with the field it sets.
var serveFlags = []struct {
	name, usage string
	field       func(*serveConfig) *string
}{
	{"data", "keep the store and the compilation cache in `DIR` (file: data)", func(c *serveConfig) *string { return &c.Data }},
	{"http", "serve HTTP on `ADDR` (file: listen.http)", func(c *serveConfig) *string { return &c.Listen.HTTP }},
	{"capnp", "serve Cap'n Proto on `ADDR` (file: listen.capnp)", func(c *serveConfig) *string { return &c.Listen.Capnp }},
	{"tls-cert", "serve both listeners over TLS with the PEM certificate chain in `FILE` (file: tls.cert)", func(c *serveConfig) *string { return &c.TLS.Cert }},
	{"tls-key", "the PEM private key of --tls-cert, in `FILE` (file: tls.key)", func(c *serveConfig) *string { return &c.TLS.Key }},
}

func serve(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	configFile := fs.String("config", "", "read the configuration from the TOML `FILE`; flags override it")
	defaults := defaultServeConfig()
	for _, f := range serveFlags {
		fs.String(f.name, *f.field(&defaults), f.usage)
	}
	dev := fs.Bool("dev", false, `create user "demo" and print its token (the same one every start, kept in DIR/dev-token); install the built examples as builtin blueprints`)
	examples := fs.String("examples", "./examples", "with --dev, install the built examples in `DIR` (make examples builds them)")
	var origins []origin
	fs.Func("allow-origin", "let pages from `ORIGIN` (https://host[:port]) open websockets, besides the server's own; repeat it for more (file: websocket.allowed_origins)", func(s string) error {
		var o origin
		if err := o.UnmarshalTOML(s); err != nil {
			return err
		}
		origins = append(origins, o)
		return nil
	})
	if _, err := parseFlags(fs, args, 0, 0); err != nil {
		return err
	}
	cfg, err := loadConfig(*configFile)
	if err != nil {
		return err
	}
	if origins != nil {
		cfg.Websocket.AllowedOrigins = origins
	}
	fs.Visit(func(set *flag.Flag) {
		for _, f := range serveFlags {
			if f.name == set.Name {
				*f.field(&cfg) = set.Value.String()
			}
		}
	})
	for name, addr := range map[string]string{"http (listen.http)": cfg.Listen.HTTP, "capnp (listen.capnp)": cfg.Listen.Capnp} {
		// An empty address would listen on every interface, on a random
		// port: never what was meant. ":7070" says "every interface".
		if addr == "" {
			return fmt.Errorf("--%s: empty address; want HOST:PORT, such as 127.0.0.1:7070", name)
		}
	}
	if err := fitConnections(&cfg, openFileLimit(), stderr); err != nil {
		return err
	}
	var devExamples string
	if *dev {
		devExamples = *examples
	}
	return runServer(cfg, devExamples, stdout, stderr)
}

// runServer serves with cfg until SIGINT or SIGTERM; with devExamples set, it
// sets up the demo user and the examples in it first. Everything that can
// be checked without the data directory (the TLS files, the listeners) is
// checked before it is touched, and a start that fails after creating the
// data directory removes it again.
func runServer(cfg serveConfig, devExamples string, stdout, stderr io.Writer) (err error) {
	tlsConfig, err := loadTLSConfig(cfg.TLS.Cert, cfg.TLS.Key)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The Cap'n Proto server bounds its connections itself (rpcguard).
	capnpLn, err := listen("capnp", cfg.Listen.Capnp, tlsConfig, logger, nil)
	if err != nil {
		return err
	}
	defer capnpLn.Close()
	// Without a bound, connections that never finish a request header
	// would take every file descriptor until ReadHeaderTimeout.
	httpLn, err := listen("http", cfg.Listen.HTTP, tlsConfig, logger, func(ln net.Listener) net.Listener {
		return connlimit.NewListener(ln, connlimit.WithMax(httpMaxConns), connlimit.WithMaxPerHost(httpMaxConnsPerHost))
	})
	if err != nil {
		return err
	}
	defer httpLn.Close()

	// Blueprints compile in a child process under hard limits: this binary,
	// started as its hidden compile worker.
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the gadgetd binary to compile blueprints with: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Registered before the server's Close, so it runs after it.
	started := false
	if created := firstMissingDir(cfg.Data); created != "" {
		defer func() {
			if !started {
				os.RemoveAll(created)
			}
		}()
	}
	srv, err := server.Open(ctx, cfg.Data, append(cfg.serverOptions(), server.WithLogger(logger),
		server.WithWasmOptions(wasmhost.WithCompileWorker(exe, compileWorkerCommand)))...)
	if err != nil {
		return err
	}
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(shutdownCtx); err != nil {
			fmt.Fprintf(stderr, "gadgetd: shutting down: %v\n", err)
		}
	}()

	var token string
	if devExamples != "" {
		if token, err = devSetup(ctx, srv, cfg.Data, devExamples, stderr); err != nil {
			return err
		}
	}

	httpSrv := &http.Server{
		Handler:           web.Handler(append(cfg.webOptions(), web.WithCapnp(srv))...),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		// An upgraded websocket is a Cap'n Proto connection from then on,
		// bounded with the others by the Cap'n Proto server (connections.max
		// in all, logins.max_per_address from one address before login,
		// the oldest of those evicted when full): it leaves the HTTP
		// listener's bounds, which are there for requests, so that
		// sessions cannot keep page loads out.
		// A connection waiting for a request (new, or idle between
		// requests) is the first to go when the listener is full, so that
		// connections held open without requests cannot keep page loads
		// out either.
		ConnState: func(nc net.Conn, state http.ConnState) {
			switch state {
			case http.StateNew, http.StateIdle:
				connlimit.SetIdle(nc, true)
			case http.StateActive:
				connlimit.SetIdle(nc, false)
			case http.StateHijacked:
				connlimit.Release(nc)
			}
		},
	}
	errs := make(chan error, 2)
	go func() { errs <- srv.ServeCapnp(capnpLn) }()
	go func() {
		if err := httpSrv.Serve(httpLn); !errors.Is(err, http.ErrServerClosed) {
			errs <- err
		}
	}()
	started = true
	// With TLS the addresses carry their scheme, so they can be pasted into
	// GADGETD_ADDR and a browser as they are.
	capnpShown, httpShown, httpURL := capnpLn.Addr().String(), httpLn.Addr().String(), "http://"+httpLn.Addr().String()
	if tlsConfig != nil {
		capnpShown, httpShown, httpURL = client.TLSScheme+capnpShown, "https://"+httpShown, "https://"+httpShown
	}
	fmt.Fprintf(stdout, "capnp listening on %s\n", capnpShown)
	fmt.Fprintf(stdout, "http listening on %s\n", httpShown)
	if devExamples != "" {
		fmt.Fprintf(stdout, "login: %s/#token=%s\n", httpURL, token)
		fmt.Fprintf(stdout, "GADGETD_TOKEN=%s\n", token)
	}

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errs:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	httpSrv.Shutdown(shutdownCtx)
	return serveErr
}

// firstMissingDir returns the outermost directory of path that does not
// exist yet, the one creating path would create first, or "" if path
// exists.
func firstMissingDir(path string) string {
	missing := ""
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
			return missing
		}
		missing = p
		if filepath.Dir(p) == p {
			return missing
		}
	}
}

// devSetup creates the demo user and installs every built example as a
// builtin. It returns the demo user's token, the same one on every start
// (kept in dataDir/dev-token, mode 0600) unless it was revoked. It does not
// build the examples (make examples does, once, and only when they changed):
// an example that is not built, or does not load, is reported and skipped,
// so one broken example does not stop development of the others.
func devSetup(ctx context.Context, srv *server.Server, dataDir, examples string, stderr io.Writer) (string, error) {
	token, err := srv.KeptToken(ctx, devUser, filepath.Join(dataDir, devTokenFile), "serve --dev")
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(examples)
	if err != nil {
		return "", fmt.Errorf("--dev: reading examples: %w", err)
	}
	for _, e := range entries {
		dir := filepath.Join(examples, e.Name())
		// Stat follows a symbolic link to an example's directory.
		if _, err := os.Stat(filepath.Join(dir, blueprint.ManifestFile)); err != nil {
			continue
		}
		b, err := blueprint.Load(dir)
		if err == nil {
			_, err = srv.InstallBuiltin(ctx, b)
		}
		if err != nil {
			fmt.Fprintf(stderr, "gadgetd: --dev: skipping example %s: %v\n", e.Name(), err)
		}
	}
	return token, nil
}

func userAdd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("user add", flag.ContinueOnError)
	dataDir := fs.String("data", "./gadgetd-data", "data directory")
	pos, err := parseFlags(fs, args, 1, 1)
	if err != nil {
		return err
	}
	token, err := server.AddUser(context.Background(), *dataDir, pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, token)
	return nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/toolchain"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// devUser is the user `serve --dev` logs in, with the token kept in the
// data directory's devTokenFile.
const (
	devUser      = "demo"
	devTokenFile = "dev-token"
)

func serve(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	dataDir := fs.String("data", "./gadgetd-data", "data directory")
	httpAddr := fs.String("http", "127.0.0.1:7070", "HTTP address")
	capnpAddr := fs.String("capnp", "127.0.0.1:7071", "Cap'n Proto TCP address")
	configFile := fs.String("config", "", "configuration file")
	tlsCert := fs.String("tls-cert", "", "TLS certificate chain (PEM) for both listeners")
	tlsKey := fs.String("tls-key", "", "TLS private key (PEM) for --tls-cert")
	dev := fs.Bool("dev", false, "development mode")
	examples := fs.String("examples", "./examples", "examples directory for --dev")
	if _, err := parseFlags(fs, args, 0, 0); err != nil {
		return err
	}
	if *configFile != "" {
		// No setting lives in the file yet (services come later), but a
		// file that was asked for and cannot be read must not be ignored.
		if _, err := os.ReadFile(*configFile); err != nil {
			return fmt.Errorf("reading --config: %w", err)
		}
	}

	tlsConfig, err := loadTLSConfig(*tlsCert, *tlsKey)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	// Blueprints compile in a child process under hard limits: this binary,
	// started as its hidden compile worker.
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the gadgetd binary to compile blueprints with: %w", err)
	}
	srv, err := server.Open(ctx, *dataDir, server.WithLogger(logger),
		server.WithWasmOptions(wasmhost.WithCompileWorker(exe, compileWorkerCommand)))
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
	if *dev {
		if token, err = devSetup(ctx, srv, *dataDir, *examples, stderr); err != nil {
			return err
		}
	}

	capnpLn, err := listen("capnp", *capnpAddr, tlsConfig, logger)
	if err != nil {
		return err
	}
	httpLn, err := listen("http", *httpAddr, tlsConfig, logger)
	if err != nil {
		capnpLn.Close()
		return err
	}
	httpSrv := &http.Server{
		Handler:           srv.HTTPHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}

	errs := make(chan error, 2)
	go func() { errs <- srv.ServeCapnp(capnpLn) }()
	go func() {
		if err := httpSrv.Serve(httpLn); !errors.Is(err, http.ErrServerClosed) {
			errs <- err
		}
	}()
	// With TLS the addresses carry their scheme, so they can be pasted into
	// GADGETD_ADDR and a browser as they are.
	capnpShown, httpShown, httpURL := capnpLn.Addr().String(), httpLn.Addr().String(), "http://"+httpLn.Addr().String()
	if tlsConfig != nil {
		capnpShown, httpShown, httpURL = client.TLSScheme+capnpShown, "https://"+httpShown, "https://"+httpShown
	}
	fmt.Fprintf(stdout, "capnp listening on %s\n", capnpShown)
	fmt.Fprintf(stdout, "http listening on %s\n", httpShown)
	if *dev {
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

// devSetup creates the demo user and installs every example as a builtin.
// It returns the demo user's token, the same one on every start (kept in
// dataDir/dev-token, mode 0600) unless it was revoked. An example that does
// not build is reported and skipped, so one broken example does not stop
// development of the others.
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
		if _, err := os.Stat(filepath.Join(dir, blueprint.ManifestFile)); !e.IsDir() || err != nil {
			continue
		}
		if err := toolchain.Build(ctx, dir); err != nil {
			fmt.Fprintf(stderr, "gadgetd: --dev: skipping example %s: %v\n", e.Name(), err)
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

package server

// Design: a Server owns the store, the wasm runtime, the compiled modules and
// the live gadgets (registry.go). mu guards the maps and the closed flag; it
// is held for store calls that must be ordered with gadget removal, never
// while a guest runs. Capabilities handed to clients (gateway, workspace,
// gadgetCap) are small values that look everything up again on each call, so
// a removed gadget or a closed server is noticed at once.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/gatekeepers/desk"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// File names inside the data directory.
const (
	storeFile = "gadgetd.db"
	cacheDir  = "wasm-cache"
)

// Server is one gadgetd kernel over one data directory.
type Server struct {
	cfg   config
	store store.Store
	rt    *wasmhost.Runtime

	rpc          *rpcguard.Server // set by Open, never changed
	installs     *installQueue    // set by Open, never changed
	pseudonymKey []byte           // set by Open, never changed
	linkKey      []byte           // likewise (links.go)
	uploads      *uploadBudget    // set by Open, never changed
	frameTickets *frameTickets    // set by Open, never changed
	desk         *desk.Desk       // set by Open, never changed

	mu      sync.Mutex
	closed  bool
	modules map[blueprintKey]*moduleEntry
	live    map[string]*liveGadget
	// storages holds every Storage object of a gadget until its last
	// reference is gone, so removal can cut off those that outlive their
	// sandbox (shells.go).
	storages map[string]map[*gadgetStorage]struct{}
	removing map[string]int // gadget ids removeGadget is deleting, and how many times over
	// quotaMu makes counting a user's gadgets and creating one atomic.
	quotaMu sync.Mutex

	watchersMu sync.Mutex
	watchers   map[string]int // Workspace.watchActions subscriptions open, per user

	presence presence // the sessions open now, per gadget (presence.go)

	stopSweep, sweepDone chan struct{} // for sweepShells
}

// Open starts a server on the data directory dir, creating it if needed.
func Open(ctx context.Context, dir string, opts ...Option) (*Server, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	pseudonymKey, err := loadOrCreateKey(filepath.Join(dir, pseudonymKeyFile))
	if err != nil {
		return nil, err
	}
	linkKey, err := loadOrCreateKey(filepath.Join(dir, linkKeyFile))
	if err != nil {
		return nil, err
	}
	st, err := store.Open(filepath.Join(dir, storeFile))
	if err != nil {
		return nil, err
	}
	// Instances of each blueprint initialized ahead of need, so opening a
	// gadget costs about a warm call, not a guest's start; WithWasmOptions
	// may set another size (wasmhost.WithInstancePool, 0: none).
	wasmOpts := append([]wasmhost.Option{
		wasmhost.WithCompilationCacheDir(filepath.Join(dir, cacheDir)),
		wasmhost.WithInstancePool(DefaultInstancePool),
	}, cfg.wasm...)
	rt, err := wasmhost.New(ctx, wasmOpts...)
	if err != nil {
		st.Close()
		return nil, err
	}
	s := &Server{
		cfg:          cfg,
		pseudonymKey: pseudonymKey,
		linkKey:      linkKey,
		store:        st,
		rt:           rt,
		uploads:      newUploadBudget(cfg.uploadsPerUser, cfg.uploadBytes),
		frameTickets: newFrameTickets(cfg.frameTicketTTL, cfg.maxFrameTicketsPerUser),
		installs:     newInstallQueue(cfg.install),
		modules:      make(map[blueprintKey]*moduleEntry),
		live:         make(map[string]*liveGadget),
		storages:     make(map[string]map[*gadgetStorage]struct{}),
		removing:     make(map[string]int),
		watchers:     make(map[string]int),
		stopSweep:    make(chan struct{}),
		sweepDone:    make(chan struct{}),
	}
	if s.desk, err = desk.Open(ctx, st.DB(), cfg.kinds, cfg.services, cfg.desk...); err != nil {
		rt.Close(ctx)
		st.Close()
		return nil, err
	}
	go s.sweepShells(s.stopSweep, s.sweepDone)
	s.rpc = rpcguard.NewServer(s.gatewayFor, cfg.maxConns, cfg.conn, cfg.logger)
	return s, nil
}

// errClosed is what calls see once the server is shutting down: a
// disconnected exception, since the client must reconnect.
var errClosed = capnp.Disconnected("server is shutting down")

// Gateway returns a new reference to the bootstrap capability. The caller
// releases it.
func (s *Server) Gateway() schema.Gateway { return schema.Gateway(s.gatewayFor(nil)) }

// gatewayFor is the Gateway of one connection (peer nil: in-process).
func (s *Server) gatewayFor(peer *rpcguard.Peer) capnp.Client {
	g := &gateway{s: s, peer: peer}
	return capnp.Client(capserver.New(schema.Gateway_Methods(nil, g), g, nil))
}

// ServeCapnp serves the Gateway on ln until ln or the server is closed, with
// the connection limits the server was configured with.
func (s *Server) ServeCapnp(ln net.Listener) error {
	return s.rpc.Serve(ln)
}

// ServeGatewayConn serves the Gateway on nc, a connection accepted
// elsewhere (a websocket, which is an rpcguard.MessageConn), under the same
// limits as the connections of ServeCapnp, and shares them with those. It
// returns at once; the server owns nc from then on.
func (s *Server) ServeGatewayConn(nc net.Conn) {
	s.rpc.ServeConn(nc, s.gatewayFor) // a refusal is told to the peer over nc
}

// Close stops serving, kills every sandbox and closes the store.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()

	var errs []error
	errs = append(errs, s.rpc.Close(ctx))
	close(s.stopSweep)
	<-s.sweepDone
	s.closeAllShells()
	errs = append(errs, s.desk.Close(ctx), s.rt.Close(ctx), s.store.Close())
	return errors.Join(errs...)
}

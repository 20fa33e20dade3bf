package desk

// Design: a Desk is shared by every connection and every sandbox. The
// ledger is its durable state, and each of its methods is one transaction,
// so the Desk keeps no copy of it: bindings are looked up again for every
// Host.gatekeeper and every applied action. What the Desk keeps in memory
// is the configuration (kinds, services: fixed at Open) and, under mu, the
// revokers of the capabilities it handed out, by binding, so that Unbind
// and RemoveGadget can cut them off; a revoker leaves that map when the
// last reference to its capability is gone. The applier runs its own
// goroutines (ledger.Applier) and calls apply and reconcile from them.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"capnproto.org/go/capnp/v3"
	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/ledger"
	"github.com/gadgetd/gadgetd/internal/revocable"
)

// Service is one service of the operator's configuration: [services.NAME].
type Service struct {
	Name   string
	Kind   string
	Config gatekeepers.ServiceConfig
}

// ServiceInfo is what users see of a configured service.
type ServiceInfo struct {
	Name, Kind, Description string
	// Actions are the methods of its kind that are actions.
	Actions []string
}

// Gadget is the gadget a call is about.
type Gadget struct {
	ID, OwnerID string
}

// Desk is the gatekeepers' side of one server.
type Desk struct {
	ledger   *ledger.Ledger
	applier  *ledger.Applier
	kinds    map[string]*kind
	services map[string]*service

	mu     sync.Mutex
	handed map[bindingKey]map[*revocable.Revoker]struct{}
}

type kind struct {
	gatekeepers.Kind
	methods map[methodKey]declared
	actions []string // the names of its Act methods, sorted
}

type service struct {
	name, description string
	kind              *kind
	svc               gatekeepers.Service
}

type bindingKey struct{ gadgetID, name string }

// The desk's default bounds.
const (
	DefaultMaxAuditEntries = 10000 // per workspace
	DefaultMaxOpenActions  = 1000  // per workspace
	DefaultMaxBindings     = 32    // per gadget
)

// Option configures a Desk.
type Option func(*config)

type config struct{ ledger []ledger.Option }

// add sets a bound of the ledger; n <= 0 keeps its default.
func (c *config) add(n int, with func(int) ledger.Option) {
	if n > 0 {
		c.ledger = append(c.ledger, with(n))
	}
}

// WithMaxAuditEntries bounds the audit log of each workspace; the oldest
// entries go first.
func WithMaxAuditEntries(n int) Option {
	return func(c *config) { c.add(n, ledger.WithMaxAuditEntries) }
}

// WithMaxOpenActions bounds the actions of each workspace not yet applied
// or rejected; past it, a gadget's action fails.
func WithMaxOpenActions(n int) Option {
	return func(c *config) { c.add(n, ledger.WithMaxOpenActions) }
}

// WithMaxBindings bounds the bindings of each gadget.
func WithMaxBindings(n int) Option {
	return func(c *config) { c.add(n, ledger.WithMaxBindings) }
}

// Open builds the services from their kinds, opens the ledger in db (which
// the caller owns and closes after Close) and starts applying approved
// actions, first those a crash interrupted.
func Open(ctx context.Context, db *bolt.DB, kinds []gatekeepers.Kind, services []Service, opts ...Option) (*Desk, error) {
	cfg := config{ledger: []ledger.Option{
		ledger.WithMaxAuditEntries(DefaultMaxAuditEntries),
		ledger.WithMaxOpenActions(DefaultMaxOpenActions),
		ledger.WithMaxBindings(DefaultMaxBindings),
	}}
	for _, o := range opts {
		o(&cfg)
	}
	d := &Desk{
		kinds:    make(map[string]*kind, len(kinds)),
		services: make(map[string]*service, len(services)),
		handed:   make(map[bindingKey]map[*revocable.Revoker]struct{}),
	}
	for _, k := range kinds {
		if _, dup := d.kinds[k.Name]; dup || k.Name == "" {
			return nil, fmt.Errorf("gatekeepers: kind %q registered twice, or without a name", k.Name)
		}
		methods, err := methodsOf(k)
		if err != nil {
			return nil, err
		}
		kd := &kind{Kind: k, methods: methods}
		for _, m := range methods {
			if m.effect == gatekeepers.Act {
				kd.actions = append(kd.actions, m.name)
			}
		}
		slices.Sort(kd.actions)
		if len(kd.actions) > 0 && k.Details == nil {
			return nil, fmt.Errorf("kind %q has actions but no Details: the owner must see what an action will do before deciding", k.Name)
		}
		d.kinds[k.Name] = kd
	}
	for _, s := range services {
		if err := gatekeepers.CheckName(s.Name); err != nil {
			return nil, fmt.Errorf("service %q: %w", s.Name, err)
		}
		if _, dup := d.services[s.Name]; dup {
			return nil, fmt.Errorf("service %q is configured twice", s.Name)
		}
		k, ok := d.kinds[s.Kind]
		if !ok {
			return nil, fmt.Errorf("service %q: unknown kind %q (kinds: %s)", s.Name, s.Kind, d.kindNames())
		}
		svc, err := k.NewService(s.Name, s.Config)
		if err != nil {
			return nil, fmt.Errorf("service %q (%s): %w", s.Name, s.Kind, err)
		}
		d.services[s.Name] = &service{name: s.Name, description: s.Config.Description, kind: k, svc: svc}
	}
	l, err := ledger.Open(db, cfg.ledger...)
	if err != nil {
		return nil, err
	}
	d.ledger = l
	d.applier = ledger.NewApplier(l, d.apply, d.reconcile)
	// ctx bounds the reconciling of what a crash interrupted; the applier
	// runs on until Close.
	if err := d.applier.Start(ctx); err != nil {
		return nil, fmt.Errorf("gatekeepers: resuming the actions a stop interrupted: %w", err)
	}
	return d, nil
}

// Close stops applying actions, waiting for the real calls in progress
// (which ctx may cut short: an action cut off that way is applied again,
// or left in doubt, at the next Open).
func (d *Desk) Close(ctx context.Context) error {
	return d.applier.Close(ctx)
}

func (d *Desk) kindNames() string {
	return fmt.Sprint(slices.Sorted(maps.Keys(d.kinds)))
}

// Services lists the configured services, by name.
func (d *Desk) Services() []ServiceInfo {
	out := make([]ServiceInfo, 0, len(d.services))
	for _, s := range d.services {
		out = append(out, ServiceInfo{Name: s.name, Kind: s.kind.Name, Description: s.description, Actions: s.kind.actions})
	}
	slices.SortFunc(out, func(a, b ServiceInfo) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Schema returns the schema of the kind named kindName.
func (d *Desk) Schema(kindName string) (gatekeepers.Schema, error) {
	k, ok := d.kinds[kindName]
	if !ok {
		return gatekeepers.Schema{}, fmt.Errorf("unknown gatekeeper kind %q (kinds: %s)", clip(kindName), d.kindNames())
	}
	return k.Schema, nil
}

// clip bounds what an error repeats of its caller's input.
func clip(s string) string { return gatekeepers.Clip(s, 64) }

// Bind binds the resource spec of service to g under name, on behalf of
// user by, and returns the binding.
func (d *Desk) Bind(ctx context.Context, g Gadget, by, name, serviceName, spec string) (gatekeepers.Binding, error) {
	if err := gatekeepers.CheckName(name); err != nil {
		return gatekeepers.Binding{}, fmt.Errorf("binding %w", err)
	}
	s, ok := d.services[serviceName]
	if !ok {
		return gatekeepers.Binding{}, fmt.Errorf("no service %q is configured (Workspace.services lists them)", clip(serviceName))
	}
	resource, err := s.svc.Resource(spec)
	if err != nil {
		return gatekeepers.Binding{}, fmt.Errorf("service %q does not grant %q: %w", s.name, clip(spec), err)
	}
	b := gatekeepers.Binding{
		GadgetID: g.ID, OwnerID: g.OwnerID, Name: name,
		Service: s.name, Kind: s.kind.Name, Resource: resource, CreatedBy: by,
	}
	if err := d.ledger.Bind(ctx, b); err != nil {
		if errors.Is(err, ledger.ErrExists) {
			return gatekeepers.Binding{}, fmt.Errorf("the gadget already has a binding named %q: unbind it first", name)
		}
		return gatekeepers.Binding{}, err
	}
	return d.ledger.Binding(ctx, g.ID, name)
}

// Unbind removes g's binding name and revokes every capability of it
// handed out; its actions not yet applied are rejected.
func (d *Desk) Unbind(ctx context.Context, gadgetID, name string) error {
	if _, err := d.ledger.Unbind(ctx, gadgetID, name); err != nil {
		if errors.Is(err, ledger.ErrNotFound) {
			return fmt.Errorf("%w %q", gatekeepers.ErrNoBinding, clip(name))
		}
		return err
	}
	d.revoke(func(k bindingKey) bool { return k == bindingKey{gadgetID, name} }, "the binding was removed")
	return nil
}

// RemoveGadget revokes everything handed to the gadget and forgets its
// bindings; its actions not yet applied are rejected, and its audit log
// entries stay.
func (d *Desk) RemoveGadget(ctx context.Context, gadgetID string) error {
	d.revoke(func(k bindingKey) bool { return k.gadgetID == gadgetID }, "the gadget was removed")
	return d.ledger.DeleteGadget(ctx, gadgetID)
}

func (d *Desk) revoke(match func(bindingKey) bool, reason string) {
	var rs []*revocable.Revoker
	d.mu.Lock()
	for k, set := range d.handed {
		if match(k) {
			for r := range set {
				rs = append(rs, r)
			}
			delete(d.handed, k)
		}
	}
	d.mu.Unlock()
	for _, r := range rs {
		r.Revoke(errors.New(reason))
	}
}

// Bindings returns the gadget's bindings, by name.
func (d *Desk) Bindings(ctx context.Context, gadgetID string) ([]gatekeepers.Binding, error) {
	return d.ledger.Bindings(ctx, gadgetID)
}

// SetAutoApprove turns auto-approval of method's actions on binding name
// on or off.
func (d *Desk) SetAutoApprove(ctx context.Context, gadgetID, name, method string, on bool) error {
	b, err := d.binding(ctx, gadgetID, name)
	if err != nil {
		return err
	}
	k := d.kinds[b.Kind]
	if k == nil || !slices.Contains(k.actions, method) {
		var actions []string
		if k != nil {
			actions = k.actions
		}
		return fmt.Errorf("%q is not an action of a %s gatekeeper (its actions: %v)", clip(method), b.Kind, actions)
	}
	return d.ledger.SetAutoApprove(ctx, gadgetID, name, method, on)
}

func (d *Desk) binding(ctx context.Context, gadgetID, name string) (gatekeepers.Binding, error) {
	b, err := d.ledger.Binding(ctx, gadgetID, name)
	if errors.Is(err, ledger.ErrNotFound) {
		return b, fmt.Errorf("%w %q", gatekeepers.ErrNoBinding, clip(name))
	}
	return b, err
}

// Gatekeeper returns the capability of g's binding name, for g's sandbox:
// its calls are made for user, audited, held to its kind's declared
// effects, and revoked when the binding goes.
func (d *Desk) Gatekeeper(ctx context.Context, g Gadget, user, name string) (capnp.Client, error) {
	b, err := d.binding(ctx, g.ID, name)
	if err != nil {
		return capnp.Client{}, err
	}
	s, ok := d.services[b.Service]
	if !ok {
		return capnp.Client{}, fmt.Errorf("binding %q: its service %q is no longer configured", name, b.Service)
	}
	target := s.svc.Gatekeeper(b, &calls{d: d, b: b})
	key := bindingKey{g.ID, name}
	var r *revocable.Revoker
	c, r := revocable.NewWith(target, revocable.Options{
		Around: d.around(s.kind, b, user),
		OnShutdown: func() {
			d.mu.Lock()
			delete(d.handed[key], r)
			if len(d.handed[key]) == 0 {
				delete(d.handed, key)
			}
			d.mu.Unlock()
		},
	})
	d.mu.Lock()
	if d.handed[key] == nil {
		d.handed[key] = make(map[*revocable.Revoker]struct{})
	}
	d.handed[key][r] = struct{}{}
	d.mu.Unlock()
	// An Unbind between the lookup above and now revoked only what was in
	// the map: look again, so that this one does not outlive it.
	if _, err := d.ledger.Binding(ctx, g.ID, name); err != nil {
		r.Revoke(errors.New("the binding was removed"))
	}
	return c, nil
}

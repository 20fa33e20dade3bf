package gatekeepers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"capnproto.org/go/capnp/v3"
)

// Effect is what a gatekeeper method does to the world outside gadgetd.
type Effect uint8

const (
	// Observe is a read: the real call is made at once, and logged.
	Observe Effect = iota + 1
	// Act is a side effect: the call is queued for a human to approve, and
	// answered at once with a simulated result.
	Act
)

func (e Effect) String() string {
	switch e {
	case Observe:
		return "observation"
	case Act:
		return "action"
	}
	return "unknown effect"
}

// Kind is one kind of gatekeeper.
type Kind struct {
	// Name is the kind's name in the configuration and in bindings: "http".
	Name string
	// Schema is its Cap'n Proto interface, which extends schema.Gatekeeper.
	Schema Schema
	// Methods gives the effect of every method of the interface, by its
	// Cap'n Proto name ("listIssues"), including the inherited describe
	// (an observation). A call to a method not listed never reaches the
	// kind.
	Methods map[string]Effect
	// NewService builds the service the operator configured under name.
	NewService func(name string, cfg ServiceConfig) (Service, error)
	// Details renders, for the human deciding, everything an action of
	// method with payload will do: the whole text of an issue or a
	// comment, the body a request will send. The kernel bounds what it
	// shows of it.
	Details func(method string, payload []byte) string
}

// Schema is a kind's compiled schema, as Gadget.schema() gives a gadget's.
type Schema struct {
	Nodes       []byte // a CodeGeneratorRequest's nodes, as capnp compile -o- writes them
	InterfaceID uint64 // the kind's interface
	Source      string // the .capnp source, for blueprint authors
}

// ServiceConfig is one service of the configuration file, [services.NAME].
type ServiceConfig struct {
	// Description is shown to users choosing a service to bind.
	Description string
	// Settings are the kind's own keys of the service's table, decoded
	// from TOML (strings, numbers, booleans, lists and tables of them).
	Settings map[string]any
	// Getenv reads the server's environment, where secrets are: a kind
	// names the variable in its settings (token_env = "GITHUB_TOKEN") and
	// never takes a secret from the file.
	Getenv func(string) string
}

// Service is one configured service of a kind.
type Service interface {
	// Resource checks spec, the resource a binding asks for (a repository
	// "owner/name", a URL prefix), and returns its canonical form, or an
	// error saying why the service does not grant it.
	Resource(spec string) (string, error)
	// Gatekeeper returns the capability a binding grants: a server of the
	// kind's interface, whose methods call calls.Describe, and calls.Queue
	// for an action. The kernel wraps it (the audit log, the declared
	// effects, revocation); it is never handed out bare.
	Gatekeeper(b Binding, calls Calls) capnp.Client
	// Apply makes the real call of an approved action, with the payload its
	// method queued, and says what happened.
	Apply(ctx context.Context, b Binding, a Action) (Outcome, error)
}

// Reconciler is a Service that can tell, after a crash, whether an action
// whose real call had begun took effect, so that it is applied exactly
// once. An action in that state on a service that cannot tell is marked
// InDoubt, for a human to retry or drop.
type Reconciler interface {
	Reconcile(ctx context.Context, b Binding, a Action) (applied bool, o Outcome, err error)
}

// Binding is one gatekeeper bound to one gadget.
type Binding struct {
	GadgetID  string
	OwnerID   string // the gadget's owner, whose audit log and actions it writes
	Name      string // the name the gadget knows it by
	Service   string // the configured service
	Kind      string
	Resource  string // canonical, as Service.Resource returned it
	CreatedBy string // user id
	CreatedAt time.Time
	// AutoApprove lists the action methods of this binding that are
	// approved as they are queued.
	AutoApprove []string
}

// Calls is the action model, as a kind's methods see it, for one binding.
// Its methods take the ctx of the call being served.
type Calls interface {
	// Describe sets the human-readable line the audit log keeps for the
	// call: "list open issues of acme/widgets, page 2".
	Describe(ctx context.Context, description string)
	// Queue queues the call's action, to be given back to Service.Apply
	// with payload once approved, and returns it. It fails for a method
	// declared Observe.
	Queue(ctx context.Context, payload []byte) (Action, error)
	// Pending returns the binding's actions that were queued and not yet
	// applied or rejected, oldest first.
	Pending(ctx context.Context) ([]Action, error)
}

// ActionState is where an action is in its life.
type ActionState uint8

const (
	Pending  ActionState = iota + 1 // waiting for a decision
	Approved                        // approved, waiting its turn to apply
	Applying                        // its real call has begun
	Applied                         // done, with its Outcome
	Failed                          // its real call failed, with its Outcome
	Rejected                        // refused by a human; its change is discarded
	InDoubt                         // its real call began before a crash, and nothing can tell whether it took effect
)

// Action is one queued side effect.
type Action struct {
	ID        string // unguessable
	Seq       uint64 // order in the owner's queue
	GadgetID  string
	OwnerID   string
	Binding   string // the binding's name
	Kind      string
	Method    string // the kind's method that queued it
	UserID    string // whose call queued it
	State     ActionState
	Payload   []byte // the kind's encoding of the real call
	Describe  string // human-readable: "create issue \"Crash on start\" in acme/widgets"
	CreatedAt time.Time
	DecidedBy string // user id
	DecidedAt time.Time
	DoneAt    time.Time
	Outcome   Outcome
}

// Outcome is what an applied or failed action did.
type Outcome struct {
	Describe string // human-readable: "created issue #42"
	Result   []byte // the kind's encoding of the real result
}

// Request is a binding a blueprint asks for in its manifest
// (blueprint.json's "bindings"): the name its code asks the host for, the
// kind of gatekeeper, and why, for the user deciding what to bind.
type Request struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Why  string `json:"why"`
}

// Bounds of a Request.
const (
	MaxRequests   = 16  // per blueprint
	MaxRequestWhy = 500 // bytes
)

var nameSyntax = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)

// CheckName checks a binding's or a service's name: 1 to 63 of a-z, 0-9, _
// and -, starting with a letter.
func CheckName(name string) error {
	if !nameSyntax.MatchString(name) {
		return fmt.Errorf("name %q: want 1 to 63 of a-z, 0-9, _ and -, starting with a letter", Clip(name, maxEcho))
	}
	return nil
}

// CheckRequests checks a blueprint's binding requests.
func CheckRequests(rs []Request) error {
	if len(rs) > MaxRequests {
		return fmt.Errorf("%d bindings requested, more than %d", len(rs), MaxRequests)
	}
	seen := make(map[string]bool, len(rs))
	for _, r := range rs {
		if err := CheckName(r.Name); err != nil {
			return fmt.Errorf("binding %w", err)
		}
		if seen[r.Name] {
			return fmt.Errorf("binding %q is requested twice", r.Name)
		}
		seen[r.Name] = true
		if err := CheckName(r.Kind); err != nil {
			return fmt.Errorf("binding %q: kind %w", r.Name, err)
		}
		if r.Why == "" || len(r.Why) > MaxRequestWhy || !utf8.ValidString(r.Why) {
			return fmt.Errorf("binding %q: \"why\" must say, in at most %d bytes of UTF-8, what the gadget does with it", r.Name, MaxRequestWhy)
		}
	}
	return nil
}

// Clip cuts s to at most n bytes, on a rune boundary.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// maxEcho bounds what an error repeats of its caller's input.
const maxEcho = 64

// Errors.
var (
	// ErrNoBinding: the gadget has no binding of that name. A gadget
	// cannot tell a name that was never bound from one that was unbound.
	ErrNoBinding = errors.New("no such binding")
	// ErrNotAction: Queue was called for a method declared Observe.
	ErrNotAction = errors.New("not an action method")
)

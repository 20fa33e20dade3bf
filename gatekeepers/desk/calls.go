package desk

import (
	"context"
	"fmt"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/ledger"
)

// callKey is the context key of the call a gatekeeper is serving.
type callKey struct{}

// call is one call on a handed-out gatekeeper, as its kind's methods see it
// through Calls. It belongs to the goroutine serving the call.
type call struct {
	method   declared
	user     string
	describe string
	actionID string
}

// actorKey is the context key of WithActor's user.
type actorKey struct{}

// WithActor returns ctx carrying userID as the user on whose behalf a
// gatekeeper call made with it is made: its audit entry, and an action it
// queues, name them instead of the user the gatekeeper was handed out for
// (Gatekeeper's user), whose authority it still acts with: the binding, the
// approval and the audit log stay that owner's.
func WithActor(ctx context.Context, userID string) context.Context {
	return context.WithValue(ctx, actorKey{}, userID)
}

func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// around is the wrapper of every call on b's gatekeeper (revocable's
// Around): a method its kind declared no effect for is refused without
// reaching the kind, and every other call is written to the audit log with
// its outcome.
func (d *Desk) around(k *kind, b gatekeepers.Binding, user string) func(context.Context, capnp.Method, func(context.Context) error) error {
	return func(ctx context.Context, m capnp.Method, forward func(context.Context) error) error {
		decl, ok := k.methods[methodKey{m.InterfaceID, m.MethodID}]
		if !ok {
			return capnp.Unimplemented(fmt.Sprintf("a %s gatekeeper has no method @%d of interface %#016x", k.Name, m.MethodID, m.InterfaceID))
		}
		c := &call{method: decl, user: user}
		if actor, ok := ctx.Value(actorKey{}).(string); ok {
			c.user = actor
		}
		err := forward(context.WithValue(ctx, callKey{}, c))
		if err == nil && decl.effect == gatekeepers.Act && c.actionID == "" {
			err = fmt.Errorf("internal error: the %s gatekeeper's action %s queued nothing", k.Name, decl.name)
		}
		e := ledger.Entry{
			Time: time.Now(), OwnerID: b.OwnerID, GadgetID: b.GadgetID, UserID: c.user,
			Binding: b.Name, Kind: b.Kind, Method: decl.name, Effect: decl.effect,
			Describe: c.describe, ActionID: c.actionID, Outcome: "ok",
		}
		if decl.effect == gatekeepers.Act && err == nil {
			e.Outcome = "queued for approval"
		}
		if err != nil {
			e.Outcome, e.Failed = err.Error(), true
		}
		if rerr := d.ledger.Record(context.WithoutCancel(ctx), e); rerr != nil && err == nil {
			// A call the audit log cannot record did not happen, as far
			// as the gadget is told.
			err = fmt.Errorf("the audit log could not record the call: %w", rerr)
		}
		return err
	}
}

// calls is gatekeepers.Calls for one binding.
type calls struct {
	d *Desk
	b gatekeepers.Binding
}

func (cs *calls) Describe(ctx context.Context, description string) {
	if c := callOf(ctx); c != nil {
		c.describe = description
	}
}

func (cs *calls) Queue(ctx context.Context, payload []byte) (gatekeepers.Action, error) {
	c := callOf(ctx)
	if c == nil || c.method.effect != gatekeepers.Act {
		return gatekeepers.Action{}, gatekeepers.ErrNotAction
	}
	a, err := cs.d.ledger.Queue(ctx, gatekeepers.Action{
		GadgetID: cs.b.GadgetID, OwnerID: cs.b.OwnerID, Binding: cs.b.Name, Kind: cs.b.Kind,
		Method: c.method.name, UserID: c.user, Payload: payload, Describe: c.describe,
	})
	if err != nil {
		return a, err
	}
	c.actionID = a.ID
	return a, nil
}

func (cs *calls) Pending(ctx context.Context) ([]gatekeepers.Action, error) {
	return cs.d.ledger.Pending(ctx, cs.b.GadgetID, cs.b.Name)
}

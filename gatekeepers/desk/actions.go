package desk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/ledger"
)

// ActionFilter selects actions; its zero value selects them all.
type ActionFilter = ledger.Filter

// Decision is the outcome of deciding one action.
type Decision = ledger.Decision

// AuditFilter selects audit log entries, newest first.
type AuditFilter = ledger.AuditFilter

// AuditEntry is one entry of the audit log.
type AuditEntry = ledger.Entry

// Actions lists owner's actions, oldest first.
func (d *Desk) Actions(ctx context.Context, owner string, f ActionFilter) ([]gatekeepers.Action, error) {
	return d.ledger.Actions(ctx, owner, f)
}

// MaxDetails bounds what Details shows of an action.
const MaxDetails = 4 << 10 // a thousand actions stay within a message

// Details is everything action a will do, as its kind renders it for the
// human deciding: the whole text of an issue, the body of a request; ""
// if its kind renders nothing, or a's payload is not at hand (watch events
// carry none). It is cut at MaxDetails bytes, saying so.
func (d *Desk) Details(a gatekeepers.Action) string {
	k := d.kinds[a.Kind]
	if k == nil || k.Details == nil || len(a.Payload) == 0 {
		return ""
	}
	s := k.Details(a.Method, a.Payload)
	if len(s) > MaxDetails {
		s = gatekeepers.Clip(s, MaxDetails) + fmt.Sprintf("… (%d more bytes)", len(s)-MaxDetails)
	}
	return s
}

// Decide approves or rejects owner's actions ids, each on its own, on
// behalf of user by, and writes each decision to the audit log.
func (d *Desk) Decide(ctx context.Context, owner string, ids []string, approve bool, by string) ([]Decision, error) {
	decisions, err := d.ledger.Decide(ctx, owner, ids, approve, by)
	if err != nil {
		return nil, err
	}
	verb := map[bool]string{true: "approved", false: "rejected"}[approve]
	for _, dec := range decisions {
		if dec.Err != nil {
			continue
		}
		a := dec.Action
		d.record(ctx, a, by, verb+": "+a.Describe, false)
	}
	return decisions, nil
}

// Audit returns owner's audit log, newest first.
func (d *Desk) Audit(ctx context.Context, owner string, f AuditFilter) ([]AuditEntry, error) {
	return d.ledger.Audit(ctx, owner, f)
}

// Watch calls fn, on a goroutine of its own, with every action of owner
// queued or changed from now on, in commit order, until cancel. A watcher
// that falls behind loses changes, and missed runs before the next one.
func (d *Desk) Watch(owner string, fn func(gatekeepers.Action), missed func()) (cancel func()) {
	return d.ledger.Watch(owner, fn, missed)
}

// record writes an audit entry about action a that is not a gadget's call:
// a decision.
func (d *Desk) record(ctx context.Context, a gatekeepers.Action, user, outcome string, failed bool) {
	d.ledger.Record(context.WithoutCancel(ctx), ledger.Entry{
		Time: time.Now(), OwnerID: a.OwnerID, GadgetID: a.GadgetID, UserID: user,
		Binding: a.Binding, Kind: a.Kind, Method: a.Method, Effect: gatekeepers.Act,
		Describe: a.Describe, ActionID: a.ID, Outcome: outcome, Failed: failed,
	})
}

// apply makes the real call of an approved action (the applier's apply).
func (d *Desk) apply(ctx context.Context, a gatekeepers.Action) (gatekeepers.Outcome, error) {
	b, s, err := d.serviceOf(ctx, a)
	if err != nil {
		return gatekeepers.Outcome{}, err
	}
	// The ledger writes the outcome to the audit log as it records it.
	return s.svc.Apply(ctx, b, a)
}

// reconcile asks the service of an action a crash interrupted whether it
// took effect (the applier's reconcile); ok is false when it cannot tell.
func (d *Desk) reconcile(ctx context.Context, a gatekeepers.Action) (applied bool, o gatekeepers.Outcome, ok bool, err error) {
	b, s, err := d.serviceOf(ctx, a)
	if err != nil {
		return false, o, false, nil
	}
	r, can := s.svc.(gatekeepers.Reconciler)
	if !can {
		return false, o, false, nil
	}
	applied, o, err = r.Reconcile(ctx, b, a)
	return applied, o, err == nil, err
}

func (d *Desk) serviceOf(ctx context.Context, a gatekeepers.Action) (gatekeepers.Binding, *service, error) {
	b, err := d.ledger.Binding(ctx, a.GadgetID, a.Binding)
	if err != nil {
		if errors.Is(err, ledger.ErrNotFound) {
			return b, nil, fmt.Errorf("its binding %q was removed", a.Binding)
		}
		return b, nil, err
	}
	s, ok := d.services[b.Service]
	if !ok {
		return b, nil, fmt.Errorf("its service %q is no longer configured", b.Service)
	}
	return b, s, nil
}

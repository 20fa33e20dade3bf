// Package callstest is an in-memory gatekeepers.Calls for the tests of
// gatekeeper kinds: it keeps the audit lines and the queued actions of one
// binding, and lets a test settle actions as the durable ledger would. It
// is for tests only; the kernel's Calls is durable.
package callstest

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

// Calls is an in-memory gatekeepers.Calls for one binding. It is safe for
// concurrent use; one mutex guards everything.
type Calls struct {
	binding gatekeepers.Binding

	mu           sync.Mutex
	descriptions []string
	actions      []gatekeepers.Action
}

var _ gatekeepers.Calls = (*Calls)(nil)

// New returns an empty Calls for b.
func New(b gatekeepers.Binding) *Calls { return &Calls{binding: b} }

// Describe records the audit line of a call.
func (c *Calls) Describe(ctx context.Context, description string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.descriptions = append(c.descriptions, description)
}

// Queue records a pending action with payload, described by the call's
// last audit line. Method is left empty: only the kernel knows which
// method is being served.
func (c *Calls) Queue(ctx context.Context, payload []byte) (gatekeepers.Action, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := gatekeepers.Action{
		ID:        rand.Text(),
		Seq:       uint64(len(c.actions) + 1),
		GadgetID:  c.binding.GadgetID,
		OwnerID:   c.binding.OwnerID,
		Binding:   c.binding.Name,
		Kind:      c.binding.Kind,
		State:     gatekeepers.Pending,
		Payload:   append([]byte(nil), payload...),
		CreatedAt: time.Now(),
	}
	if n := len(c.descriptions); n > 0 {
		a.Describe = c.descriptions[n-1]
	}
	c.actions = append(c.actions, a)
	return a, nil
}

// Pending returns the actions in state Pending, oldest first.
func (c *Calls) Pending(ctx context.Context) ([]gatekeepers.Action, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []gatekeepers.Action
	for _, a := range c.actions {
		if a.State == gatekeepers.Pending {
			out = append(out, a)
		}
	}
	return out, nil
}

// Descriptions returns the audit lines recorded so far, in order.
func (c *Calls) Descriptions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.descriptions...)
}

// Actions returns every action queued so far, in order.
func (c *Calls) Actions() []gatekeepers.Action {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]gatekeepers.Action(nil), c.actions...)
}

// Settle sets the state of action id (Applied, Rejected, ...), as the
// ledger does once it is decided or applied.
func (c *Calls) Settle(id string, state gatekeepers.ActionState) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.actions {
		if c.actions[i].ID == id {
			c.actions[i].State = state
			return nil
		}
	}
	return fmt.Errorf("callstest: no action %q", id)
}

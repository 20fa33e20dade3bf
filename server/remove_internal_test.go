package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

// Removing is the owner's authority, carried by the role of the Gadget
// capability: one the owner holds attenuated to a lesser role cannot
// remove. (shares_test.go proves that a user shared with cannot.)
func TestOnlyTheOwnersGadgetCapabilityCanRemoveIt(t *testing.T) {
	ctx := context.Background()
	s, ws, id, w := ownersWorkspace(t)
	remove := func(role schema.Role) error {
		g := w.capAt(t, id, role)
		defer g.Release()
		f, release := g.Remove(ctx, nil)
		defer release()
		_, err := f.Struct()
		return err
	}

	for _, role := range []schema.Role{schema.Role_viewer, schema.Role_editor} {
		err := remove(role)
		requireContains(t, err, `removing gadget "`+id+`" needs the owner role; this capability has the `+role.String()+` role`)
		// Refused, and nothing lost: the gadget is still there and works.
		if _, err := s.store.Gadget(ctx, id); err != nil {
			t.Fatalf("after a %s's remove: %v", role, err)
		}
		session, release := openSession(t, gadgetByID(t, ws, id))
		increment(t, session)
		release()
	}

	if err := remove(schema.Role_owner); err != nil {
		t.Fatalf("the owner's remove: %v", err)
	}
	if _, err := s.store.Gadget(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("gadget after the owner's remove: %v, want not found", err)
	}
}

// deleteGate is a store whose DeleteGadget waits until the test opens the
// gate: a delete that takes long, as one behind a large commit does.
type deleteGate struct {
	store.Store
	entered chan struct{}
	open    chan struct{}
}

func (d deleteGate) DeleteGadget(ctx context.Context, id string) error {
	close(d.entered)
	<-d.open
	return d.Store.DeleteGadget(ctx, id)
}

// TestASlowRemovalDoesNotStallOtherGadgets: while one gadget's removal waits
// on the store, another gadget can still be opened and called, and the
// gadget being removed cannot be started again. Removal used to hold the
// server's lock through the delete, so every open in the server waited.
func TestASlowRemovalDoesNotStallOtherGadgets(t *testing.T) {
	s := openTestServer(t)
	ctx := context.Background()
	if _, err := s.InstallBuiltin(ctx, blueprinttest.Bundle(t, blueprinttest.TestCounter)); err != nil {
		t.Fatal(err)
	}
	gate := deleteGate{Store: s.store, entered: make(chan struct{}), open: make(chan struct{})}
	s.store = gate // before the first connection: nothing else reads it yet
	ws := serve(t, s)
	doomed, doomedCap := newGadget(t, ws, "counter")
	_, other := newGadget(t, ws, "counter")
	doomedRec, err := s.store.Gadget(ctx, doomed)
	if err != nil {
		t.Fatal(err)
	}

	removed := make(chan error, 1)
	go func() {
		f, release := doomedCap.Remove(ctx, nil)
		defer release()
		_, err := f.Struct()
		removed <- err
	}()
	<-gate.entered

	opened := make(chan error, 1)
	go func() {
		f, release := other.Open(ctx, nil)
		defer release()
		_, err := f.Struct()
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatalf("another gadget could not be opened during a removal: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(gate.open) // let the server go, so the test binary can end
		t.Fatal("opening another gadget waited for the removal")
	}
	if _, err := s.liveFor(ctx, doomedRec); err == nil {
		t.Fatal("the gadget being removed was started again")
	}

	close(gate.open)
	if err := <-removed; err != nil {
		t.Fatalf("remove: %v", err)
	}
}

// Binding a gatekeeper, removing a binding and setting auto-approval change
// what a gadget may reach: a viewer's capability can do none of them, and
// is told so before the desk is asked.
func TestAViewerCannotBindUnbindOrAutoApprove(t *testing.T) {
	ctx := context.Background()
	_, _, id, w := ownersWorkspace(t)
	g := w.capAt(t, id, schema.Role_viewer)
	defer g.Release()
	for what, call := range map[string]func() error{
		"binding a gatekeeper": func() error {
			f, release := g.Bind(ctx, nil)
			defer release()
			_, err := f.Struct()
			return err
		},
		"unbinding a gatekeeper": func() error {
			f, release := g.Unbind(ctx, nil)
			defer release()
			_, err := f.Struct()
			return err
		},
		"setting auto-approval": func() error {
			f, release := g.SetAutoApprove(ctx, nil)
			defer release()
			_, err := f.Struct()
			return err
		},
	} {
		requireContains(t, call(), what+` of gadget "`+id+`" is for its creator, through a capability of the owner role: its gatekeepers act with the creator's authority; this capability has the viewer role`)
	}
}

// capAt is w's user's Gadget capability for gadget id, attenuated to role.
func (w *workspace) capAt(t *testing.T, id string, role schema.Role) schema.Gadget {
	t.Helper()
	a, err := w.s.gadgetFor(context.Background(), w.user, id)
	if err != nil {
		t.Fatal(err)
	}
	a.Role = min(a.Role, store.Role(role))
	return w.gadgetCap(a)
}

// ownersWorkspace is a server with the test counter installed and one
// gadget of it, id, created over ws, and its owner's workspace w, from
// which the tests build Gadget capabilities attenuated to lesser roles.
func ownersWorkspace(t *testing.T) (s *Server, ws schema.Workspace, id string, w *workspace) {
	t.Helper()
	s = openTestServer(t)
	ctx := context.Background()
	if _, err := s.InstallBuiltin(ctx, blueprinttest.Bundle(t, blueprinttest.TestCounter)); err != nil {
		t.Fatal(err)
	}
	ws = serve(t, s)
	id, _ = newGadget(t, ws, "counter")
	rec, err := s.store.Gadget(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := s.store.User(ctx, rec.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	return s, ws, id, &workspace{s: s, user: owner}
}

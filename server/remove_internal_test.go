package server

import (
	"context"
	"errors"
	"testing"

	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

// Removing is the owner's authority, carried by the role of the Gadget
// capability. Every caller is the owner today, so the lesser roles are
// built here as sharing will build them: the same gadget, the same user, a
// gadgetCap with another role.
func TestOnlyTheOwnersGadgetCapabilityCanRemoveIt(t *testing.T) {
	s := openTestServer(t)
	ctx := context.Background()
	if _, err := s.InstallBuiltin(ctx, blueprinttest.Bundle(t, blueprinttest.TestCounter)); err != nil {
		t.Fatal(err)
	}
	ws := serve(t, s)
	id, _ := newGadget(t, ws, "counter")
	rec, err := s.store.Gadget(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := s.store.User(ctx, rec.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	w := &workspace{s: s, user: owner}
	remove := func(role schema.Role) error {
		g := w.gadgetCap(id, role)
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

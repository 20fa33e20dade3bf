package guesttest_test

import (
	"context"
	"testing"

	"github.com/gadgetd/gadgetd/guest/guesttest"
	"github.com/gadgetd/gadgetd/schema"
)

// TestGadgetRunsAndKeepsItsStorageAcrossARestart: a gadget built from
// source gets the caller a test names (and a session context that answers
// it), its writes commit to the in-memory
// storage, and a restarted instance runs on that storage.
func TestGadgetRunsAndKeepsItsStorageAcrossARestart(t *testing.T) {
	ctx := context.Background()
	g := guesttest.Start(t, "internal/testgadget")
	s := schema.Storage(g.Open(t, guesttest.Caller{UserID: "id-of-ann", UserName: "ann"}))
	if v, found := g.Stored("opened-by"); !found || string(v) != "id-of-ann" {
		t.Fatalf("opened-by = %q (found %v), want the caller's id", v, found)
	}
	if v, _ := g.Stored("context-says"); string(v) != "ann" {
		t.Fatalf("the session context answered the caller %q, want ann", v)
	}
	put, release := s.Put(ctx, func(p schema.Storage_put_Params) error {
		if err := p.SetKey("k"); err != nil {
			return err
		}
		return p.SetValue([]byte("v"))
	})
	defer release()
	if _, err := put.Struct(); err != nil {
		t.Fatal(err)
	}

	g.Restart(t)
	if _, found := g.Stored("k"); !found {
		t.Fatal("the write did not outlive the instance")
	}
	s = schema.Storage(g.Open(t, guesttest.Caller{UserID: "id-of-bob"}))
	// A synchronous stub outside a gadget: SendCall, and a wait.
	res, release, err := s.GetSync(ctx, func(p schema.Storage_get_Params) error { return p.SetKey("k") })
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if v, _ := res.Value(); string(v) != "v" {
		t.Errorf("after the restart k = %q, want v", v)
	}
	if v, _ := g.Stored("opened-by"); string(v) != "id-of-bob" {
		t.Errorf("opened-by = %q after bob opened it", v)
	}
}

// The session context's present answers the sessions of the test's gadget
// open now, as gadgetd does: each user once, at their highest role, in the
// order of their oldest open session, and no longer once released. (The
// test gadget writes what it was told at each open.)
func TestPresentListsTheSessionsOpenNowOnePerUser(t *testing.T) {
	g := guesttest.Start(t, "internal/testgadget")
	said := func() string {
		t.Helper()
		v, _ := g.Stored("present-says")
		return string(v)
	}
	ann := g.Open(t, guesttest.Caller{UserID: "id-of-ann", UserName: "ann"})
	if got := said(); got != "ann:viewer" {
		t.Fatalf("ann alone: present said %q, want ann:viewer (the opener is present during open)", got)
	}
	bob := g.Open(t, guesttest.Caller{UserID: "id-of-bob", UserName: "bob"})
	if got := said(); got != "ann:viewer,bob:viewer" {
		t.Fatalf("ann, then bob: present said %q", got)
	}
	g.Open(t, guesttest.Caller{UserID: "id-of-ann", UserName: "ann", Role: schema.Role_editor})
	if got := said(); got != "ann:editor,bob:viewer" {
		t.Fatalf("ann again as editor: present said %q, want ann once, as editor, still first", got)
	}
	bob.Release()
	ann.Release()
	g.Open(t, guesttest.Caller{UserID: "id-of-carol", UserName: "carol"})
	if got := said(); got != "ann:editor,carol:viewer" {
		t.Fatalf("after bob and ann's viewer session left: present said %q, want ann (editor) and carol", got)
	}
}

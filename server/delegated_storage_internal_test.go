package server

import (
	"context"
	"testing"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server/internal/testguests/delegate/delegatepb"
)

// A Storage a gadget delegated to its user, handed by the user to another
// gadget, used to join the call the first gadget was running: go-capnp
// delivers the second gadget's calls in process (Send), the way the first
// gadget's own calls arrive, and Send joined the open call scope. The second
// gadget read that call's unsaved write, and its own acknowledged write
// vanished when that call failed (an outside tester's finding F3). Only the
// gadget's own guest joins its calls now; another gadget's calls through
// the same capability are transactions of their own.
func TestADelegatedStorageUsedByAnotherGadgetIsNotPartOfTheRunningCall(t *testing.T) {
	s := openTestServer(t)
	bp := store.BlueprintRecord{
		Name: "delegate", Version: "1", SessionInterface: delegatepb.Delegate_TypeID,
		Wasm:        blueprinttest.Wasm(t, "server/internal/testguests/delegate"),
		SchemaNodes: blueprinttest.Schema(t, "server/internal/testguests/delegate/delegatepb", "delegate.capnp"),
	}
	if _, err := s.install(context.Background(), bp, true); err != nil {
		t.Fatal(err)
	}
	ws := serve(t, s)
	ctx := context.Background()
	session := func() (string, delegatepb.Delegate) {
		id, g := newGadget(t, ws, "delegate")
		c, release := openSession(t, g)
		t.Cleanup(release)
		return id, delegatepb.Delegate(c)
	}
	idA, a := session()
	_, b := session()

	sf, releaseStorage := a.Storage(ctx, nil)
	defer releaseStorage()
	delegated := schema.Storage(sf.Storage())

	// a writes, then waits (inside the same call) until b's write shows,
	// and fails.
	failed := make(chan error, 1)
	go func() {
		f, release := a.WriteThenFail(ctx, func(p delegatepb.Delegate_writeThenFail_Params) error {
			p.SetMs(20000)
			if err := p.SetKey("a-unsaved"); err != nil {
				return err
			}
			if err := p.SetValue([]byte("written by a call that fails")); err != nil {
				return err
			}
			return p.SetUntil("from-b")
		})
		defer release()
		_, err := f.Struct()
		failed <- err
	}()
	eventually(t, "a's call has written", func() bool {
		logs := s.logsOf(idA)
		return logs != nil && len(logs.newest(1)) == 1 && logs.newest(1)[0].message == "written"
	})

	f, release := b.Use(ctx, func(p delegatepb.Delegate_use_Params) error {
		if err := p.SetStorage(capnp.Client(delegated).AddRef()); err != nil {
			return err
		}
		if err := p.SetGet("a-unsaved"); err != nil {
			return err
		}
		if err := p.SetPutKey("from-b"); err != nil {
			return err
		}
		return p.SetPutValue([]byte("acknowledged"))
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("b's use of a's delegated storage: %v", err)
	}
	if res.Found() {
		v, _ := res.Value()
		t.Errorf("b read a's running call's unsaved write (%q)", v)
	}

	requireContains(t, <-failed, "fails on purpose")
	if stored(t, s, idA, "a-unsaved") {
		t.Error("the failed call's write was kept")
	}
	if !stored(t, s, idA, "from-b") {
		t.Error("b's acknowledged write went with a's failed call")
	}
}

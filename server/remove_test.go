package server_test

import (
	"slices"
	"testing"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/schema"
)

// Workspace.remove(id) is gone: its ordinal answers unimplemented and says
// what replaced it, and removes nothing.
func TestTheOldWorkspaceRemoveIsUnimplementedAndRemovesNothing(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	ws := h.login(t, h.token("alice"))
	_, id := create(t, ws, "counter")
	f, release := ws.ObsoleteRemove(ctx, func(p schema.Workspace_obsoleteRemove_Params) error { return p.SetId(id) })
	defer release()
	_, err := f.Struct()
	if !capnp.IsUnimplemented(err) {
		t.Fatalf("Workspace.remove: %v, want unimplemented", err)
	}
	requireErrorContains(t, err, "Workspace.open(id).gadget.remove()")
	if ids, err := gadgetIDs(ctx, ws); err != nil || !slices.Equal(ids, []string{id}) {
		t.Fatalf("after the old remove: listed %v, %v; want [%s]", ids, err, id)
	}
}

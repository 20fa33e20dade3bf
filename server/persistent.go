package server

import (
	"context"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/std/capnp/persistent"

	"github.com/gadgetd/gadgetd/schema"
)

// Persistent capabilities (save, restore) are being built: until then the
// methods the schema declares answer unimplemented.

func (g *gadgetCap) Save(ctx context.Context, call persistent.Persistent_save) error {
	return capnp.Unimplemented("save is not implemented yet")
}

func (g *gateway) Restore(ctx context.Context, call schema.Gateway_restore) error {
	return capnp.Unimplemented("restore is not implemented yet")
}

func (ws *workspace) Saved(ctx context.Context, call schema.Workspace_saved) error {
	return capnp.Unimplemented("saved is not implemented yet")
}

func (ws *workspace) DropSaved(ctx context.Context, call schema.Workspace_dropSaved) error {
	return capnp.Unimplemented("dropSaved is not implemented yet")
}

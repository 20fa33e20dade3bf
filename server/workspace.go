package server

import (
	"context"
	"slices"
	"strings"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

// workspace is one user's Workspace capability.
type workspace struct {
	s    *Server
	user store.User
	cred *credential // the token it was obtained with (tokens.go)
}

func (w *workspace) Blueprints(ctx context.Context, call schema.Workspace_blueprints) error {
	bps, err := w.s.visibleBlueprints(ctx, w.user)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewBlueprints(int32(len(bps)))
	if err != nil {
		return err
	}
	for i, bp := range bps {
		if err := fillBlueprintInfo(list.At(i), bp); err != nil {
			return err
		}
	}
	return nil
}

func (w *workspace) InstallBlueprint(ctx context.Context, call schema.Workspace_installBlueprint) error {
	in, err := call.Args().Bundle()
	if err != nil {
		return err
	}
	if !in.IsValid() {
		return errString("installBlueprint needs a bundle")
	}
	// A bundle sent in one message takes an upload slot too, so that a
	// user's installs in progress are bounded however they arrive. (The
	// call's message holds it, and is never a null pointer as a field is.)
	size, err := call.Args().Message().TotalSize()
	if err != nil {
		return err
	}
	release, err := w.s.uploads.reserve(w.user.ID, size)
	if err != nil {
		return err
	}
	defer release()
	// Compiling takes a while; let this user's other calls proceed.
	call.Go()
	installed, err := w.installFrom(ctx, in)
	return answerInstall(call.AllocResults, installed, err)
}

func (w *workspace) Create(ctx context.Context, call schema.Workspace_create) error {
	name, err := call.Args().Blueprint()
	if err != nil {
		return err
	}
	label, err := call.Args().Name()
	if err != nil {
		return err
	}
	if len(label) > 200 {
		return errString("gadget name is longer than 200 bytes")
	}
	bp, err := w.s.newestBlueprint(ctx, w.user, name)
	if err != nil {
		return err
	}
	if label == "" {
		label = bp.Name
	}
	g := store.GadgetRecord{
		ID:               store.NewID(),
		Name:             label,
		OwnerID:          w.user.ID,
		BlueprintOwner:   bp.Owner,
		BlueprintName:    bp.Name,
		BlueprintVersion: bp.Version,
		SessionInterface: bp.SessionInterface,
		CreatedAt:        time.Now().UTC().Truncate(time.Millisecond),
	}
	if err := w.s.createGadget(ctx, g); err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	info, err := res.NewInfo()
	if err != nil {
		return err
	}
	a := store.GadgetAccess{Gadget: g, Role: store.RoleOwner}
	if err := fillGadgetInfo(ctx, info, a, w.names()); err != nil {
		return err
	}
	if err := w.s.fillDeclarations(ctx, info, g); err != nil {
		return err
	}
	return res.SetGadget(w.gadgetCap(a))
}

// gadgetCap returns a Gadget capability for a, as this workspace's user
// reaches it, at most at a's role.
func (w *workspace) gadgetCap(a store.GadgetAccess) schema.Gadget {
	g := &gadgetCap{s: w.s, user: w.user, id: a.Gadget.ID, role: schema.Role(a.Role), shared: a.Gadget.OwnerID != w.user.ID, cred: w.cred}
	return g.client()
}

// names looks user names up for one answer, knowing the workspace's own.
func (w *workspace) names() *userNames {
	return &userNames{s: w.s, known: map[string]string{w.user.ID: w.user.Name}}
}

// reachable returns the gadgets w's user owns and those shared with them,
// oldest first.
func (w *workspace) reachable(ctx context.Context) ([]store.GadgetAccess, error) {
	owned, err := w.s.store.Gadgets(ctx, w.user.ID)
	if err != nil {
		return nil, err
	}
	all, err := w.s.store.SharedWith(ctx, w.user.ID)
	if err != nil {
		return nil, err
	}
	for _, g := range owned {
		all = append(all, store.GadgetAccess{Gadget: g, Role: store.RoleOwner})
	}
	slices.SortFunc(all, func(a, b store.GadgetAccess) int {
		if c := a.Gadget.CreatedAt.Compare(b.Gadget.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Gadget.ID, b.Gadget.ID)
	})
	return all, nil
}

func (w *workspace) Gadgets(ctx context.Context, call schema.Workspace_gadgets) error {
	gadgets, err := w.reachable(ctx)
	if err != nil {
		return err
	}
	names := w.names()
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewGadgets(int32(len(gadgets)))
	if err != nil {
		return err
	}
	for i, a := range gadgets {
		entry := list.At(i)
		info, err := entry.NewInfo()
		if err != nil {
			return err
		}
		if err := fillGadgetInfo(ctx, info, a, names); err != nil {
			return err
		}
		if err := entry.SetGadget(w.gadgetCap(a)); err != nil {
			return err
		}
	}
	return nil
}

func (w *workspace) Open(ctx context.Context, call schema.Workspace_open) error {
	id, err := call.Args().Id()
	if err != nil {
		return err
	}
	a, err := w.s.gadgetFor(ctx, w.user, id)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetGadget(w.gadgetCap(a))
}

// ObsoleteRemove holds the ordinal of the old Workspace.remove(id); removing
// is Gadget.remove now.
func (w *workspace) ObsoleteRemove(context.Context, schema.Workspace_obsoleteRemove) error {
	return capnp.Unimplemented("Workspace.remove(id) is gone: call remove() on the gadget's capability (Workspace.open(id).gadget.remove())")
}

// errString is an error whose text is all there is to say.
type errString string

func (e errString) Error() string { return string(e) }

// fillGadgetInfo describes a, naming its owner and sharer with names;
// fillDeclarations adds what its blueprint version declares.
func fillGadgetInfo(ctx context.Context, dst schema.GadgetInfo, a store.GadgetAccess, names *userNames) error {
	g := a.Gadget
	owner, err := names.of(ctx, g.OwnerID)
	if err != nil {
		return err
	}
	var sharer string
	if a.Via.SharerID != "" {
		if sharer, err = names.of(ctx, a.Via.SharerID); err != nil {
			return err
		}
	}
	dst.SetSessionInterface(g.SessionInterface)
	dst.SetRole(schema.Role(a.Role))
	dst.SetCreatedAt(g.CreatedAt.UnixMilli())
	for _, set := range []func() error{
		func() error { return dst.SetId(g.ID) },
		func() error { return dst.SetName(g.Name) },
		func() error { return dst.SetBlueprint(g.BlueprintName) },
		func() error { return dst.SetBlueprintVersion(g.BlueprintVersion) },
		func() error { return dst.SetOwner(owner) },
		func() error { return dst.SetSharedBy(sharer) },
	} {
		if err := set(); err != nil {
			return err
		}
	}
	return nil
}

// fillDeclarations fills dst's permissions and roles: what the blueprint
// version g runs declares, whatever versions the user has installed, for
// whoever shares it to choose a role by (up to about 20 KB). Only answers
// about one gadget carry them; the workspace's listing leaves them out, or
// a user whom others share many gadgets with would get a listing past the
// message limit.
func (s *Server) fillDeclarations(ctx context.Context, dst schema.GadgetInfo, g store.GadgetRecord) error {
	bp, err := s.store.BlueprintMeta(ctx, g.BlueprintOwner, g.BlueprintName, g.BlueprintVersion)
	if err != nil {
		return err
	}
	return blueprint.FillAccess(bp.Access, dst.NewPermissions, dst.NewRoles)
}

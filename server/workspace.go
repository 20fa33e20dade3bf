package server

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
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

// A listing comes a page at a time: gadgets others share with a user are not
// bounded by the user's own gadget quota, so a listing in one answer could
// grow past the message limit, or its capabilities past the connection's
// export bound, and the user could then never list their workspace.
const (
	defaultListingPage = 100  // a page when the caller asks for 0
	maxListingPage     = 1000 // the most a page holds, well inside both bounds
)

func (w *workspace) Gadgets(ctx context.Context, call schema.Workspace_gadgets) error {
	limit := int(call.Args().Limit())
	switch {
	case limit == 0:
		limit = defaultListingPage
	case limit > maxListingPage:
		return fmt.Errorf("limit %d is more than %d, the most one page holds", limit, maxListingPage)
	}
	after, err := call.Args().After()
	if err != nil {
		return err
	}
	var from listingPos
	if after != "" {
		if from, err = parseListingCursor(after); err != nil {
			return err
		}
	}
	all, err := w.reachable(ctx)
	if err != nil {
		return err
	}
	// The page starts strictly after the cursor's position, whether or not
	// a gadget is still there. Gadgets are created at whole milliseconds, so
	// one made since comes after it unless made within that millisecond
	// with a smaller id (or under a clock set back).
	start := 0
	if after != "" {
		i, found := slices.BinarySearchFunc(all, from, func(a store.GadgetAccess, p listingPos) int {
			return positionOf(a).compare(p)
		})
		start = i
		if found {
			start++
		}
	}
	page := all[start:min(start+limit, len(all))]
	names := w.names()
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	if start+len(page) < len(all) {
		if err := res.SetNext(positionOf(page[len(page)-1]).cursor()); err != nil {
			return err
		}
	}
	list, err := res.NewGadgets(int32(len(page)))
	if err != nil {
		return err
	}
	for i, a := range page {
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

// listingPos is a gadget's place in the listing's order (reachable's).
type listingPos struct {
	createdAt int64 // Unix nanoseconds: exact, as the order compares times
	id        string
}

func positionOf(a store.GadgetAccess) listingPos {
	return listingPos{createdAt: a.Gadget.CreatedAt.UnixNano(), id: a.Gadget.ID}
}

func (p listingPos) compare(q listingPos) int {
	if c := cmp.Compare(p.createdAt, q.createdAt); c != 0 {
		return c
	}
	return strings.Compare(p.id, q.id)
}

// A listing cursor is a position, nothing more: it names no user and grants
// nothing, so whoever presents it gets their own gadgets after that place.
// It is base64url of the tag, the time and the id, so that clients treat it
// as opaque and a cursor from elsewhere is told apart from one of ours.
const listingCursorTag = "gadgets1"

func (p listingPos) cursor() string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s.%d.%s", listingCursorTag, p.createdAt, p.id))
}

// errListingCursor is the error of every cursor this server did not make.
const errListingCursor = errString("after is not a cursor of this listing: pass empty for the first page, or the previous page's next")

func parseListingCursor(s string) (listingPos, error) {
	if len(s) > 200 { // ours are under 80
		return listingPos{}, errListingCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return listingPos{}, errListingCursor
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 3 || parts[0] != listingCursorTag || !isID(parts[2]) {
		return listingPos{}, errListingCursor
	}
	t, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return listingPos{}, errListingCursor
	}
	return listingPos{createdAt: t, id: parts[2]}, nil
}

// isID reports whether s could be an id store.NewID made: lower-case
// base32.
func isID(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz234567") == ""
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

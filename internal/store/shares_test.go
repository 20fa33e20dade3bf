package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/store"
)

// sharing is a store with one gadget, owned by users[0], and more users.
type sharing struct {
	t      *testing.T
	s      *store.BoltStore
	gadget string
	users  map[string]string // name -> id
}

func newSharing(t *testing.T, names ...string) *sharing {
	t.Helper()
	ctx := context.Background()
	sh := &sharing{t: t, s: openStore(t, filepath.Join(t.TempDir(), "db")), users: map[string]string{}}
	for _, n := range names {
		u, err := sh.s.CreateUser(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		sh.users[n] = u.ID
	}
	sh.gadget = store.NewID()
	if err := sh.s.CreateGadget(ctx, store.GadgetRecord{ID: sh.gadget, OwnerID: sh.users[names[0]], CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return sh
}

func (sh *sharing) share(from, to string, role store.Role) (store.Grant, error) {
	return sh.s.Share(context.Background(), sh.gadget, sh.users[from], sh.users[to], role)
}

func (sh *sharing) mustShare(from, to string, role store.Role) store.Grant {
	sh.t.Helper()
	g, err := sh.share(from, to, role)
	if err != nil {
		sh.t.Fatalf("%s sharing with %s as %s: %v", from, to, role, err)
	}
	return g
}

// role is name's effective role, or -1 without access.
func (sh *sharing) role(name string) int {
	sh.t.Helper()
	a, err := sh.s.Access(context.Background(), sh.gadget, sh.users[name])
	if errors.Is(err, store.ErrNotFound) {
		return -1
	}
	if err != nil {
		sh.t.Fatal(err)
	}
	return int(a.Role)
}

// holders lists who holds a grant on the gadget, a name per grant, sorted.
func (sh *sharing) holders() []string {
	sh.t.Helper()
	gs, err := sh.s.Grants(context.Background(), sh.gadget)
	if err != nil {
		sh.t.Fatal(err)
	}
	var out []string
	for _, g := range gs {
		for n, id := range sh.users {
			if id == g.HolderID {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (sh *sharing) sharedWith(name string) []store.GadgetAccess {
	sh.t.Helper()
	out, err := sh.s.SharedWith(context.Background(), sh.users[name])
	if err != nil {
		sh.t.Fatal(err)
	}
	return out
}

func TestRevokingAGrantDeletesItsWholeSubtreeAndNothingElse(t *testing.T) {
	sh := newSharing(t, "alice", "bob", "carol", "dave", "erin")
	bob := sh.mustShare("alice", "bob", store.RoleOwner)
	sh.mustShare("bob", "carol", store.RoleEditor)
	sh.mustShare("carol", "dave", store.RoleViewer)
	sh.mustShare("alice", "erin", store.RoleViewer)
	before := sh.s.ShareChanges()

	dropped, err := sh.s.Unshare(context.Background(), sh.gadget, sh.users["alice"], sh.users["bob"])
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 3 || dropped[0].ID != bob.ID {
		t.Fatalf("unshare dropped %+v, want bob's grant and the two below it", dropped)
	}
	for name, want := range map[string]int{"alice": int(store.RoleOwner), "bob": -1, "carol": -1, "dave": -1, "erin": int(store.RoleViewer)} {
		if got := sh.role(name); got != want {
			t.Errorf("%s's role after revoking bob = %d, want %d", name, got, want)
		}
	}
	if got := sh.holders(); !slices.Equal(got, []string{"erin"}) {
		t.Errorf("holders after revoking bob = %q, want only erin", got)
	}
	for _, name := range []string{"bob", "carol", "dave"} {
		if got := sh.sharedWith(name); len(got) != 0 {
			t.Errorf("%s still reaches %+v", name, got)
		}
	}
	if sh.s.ShareChanges() <= before {
		t.Error("ShareChanges did not grow with a revocation")
	}
}

func TestEffectiveRoleIsTheLeastAlongTheChainAndTheBestOverGrants(t *testing.T) {
	sh := newSharing(t, "alice", "bob", "carol", "dave")
	sh.mustShare("alice", "bob", store.RoleOwner)
	sh.mustShare("bob", "carol", store.RoleOwner)
	// Lowering bob lowers carol, whose grant says owner, below him.
	sh.mustShare("alice", "bob", store.RoleEditor)
	if got := sh.role("carol"); got != int(store.RoleEditor) {
		t.Fatalf("carol's role below an editor = %d, want editor", got)
	}
	sh.mustShare("alice", "bob", store.RoleViewer)
	if got := sh.role("carol"); got != int(store.RoleViewer) {
		t.Fatalf("carol's role below a viewer = %d, want viewer", got)
	}
	// A second, better grant wins, and the listing says whose it is.
	sh.mustShare("alice", "dave", store.RoleOwner)
	sh.mustShare("dave", "carol", store.RoleEditor)
	if got := sh.role("carol"); got != int(store.RoleEditor) {
		t.Fatalf("carol's role with a second grant = %d, want editor", got)
	}
	shared := sh.sharedWith("carol")
	if len(shared) != 1 || shared[0].Role != store.RoleEditor || shared[0].Via.SharerID != sh.users["dave"] || shared[0].Gadget.ID != sh.gadget {
		t.Fatalf("carol's shared gadgets = %+v, want the gadget once, as editor via dave", shared)
	}
}

func TestSharingIsBoundedByTheSharersOwnRole(t *testing.T) {
	sh := newSharing(t, "alice", "bob", "carol", "mallory")
	sh.mustShare("alice", "bob", store.RoleEditor)
	sh.mustShare("bob", "carol", store.RoleViewer)
	for _, c := range []struct {
		from, to string
		role     store.Role
		want     error
	}{
		{"bob", "mallory", store.RoleOwner, store.ErrDenied},    // above his own role
		{"carol", "mallory", store.RoleViewer, store.ErrDenied}, // a viewer
		{"bob", "bob", store.RoleViewer, store.ErrDenied},       // himself
		{"bob", "alice", store.RoleViewer, store.ErrDenied},     // the owner
		{"mallory", "bob", store.RoleViewer, store.ErrNotFound}, // no access at all
	} {
		if _, err := sh.share(c.from, c.to, c.role); !errors.Is(err, c.want) {
			t.Errorf("%s sharing with %s as %s: %v, want %v", c.from, c.to, c.role, err, c.want)
		}
	}
	if got := sh.role("mallory"); got != -1 {
		t.Fatalf("mallory's role after refused shares = %d", got)
	}
	if got := sh.holders(); !slices.Equal(got, []string{"bob", "carol"}) {
		t.Fatalf("holders after refused shares = %q", got)
	}
}

func TestResharingReplacesTheRoleAndKeepsTheGrantAndItsSubtree(t *testing.T) {
	sh := newSharing(t, "alice", "bob", "carol")
	first := sh.mustShare("alice", "bob", store.RoleViewer)
	sh.mustShare("alice", "bob", store.RoleOwner)
	sh.mustShare("bob", "carol", store.RoleEditor)
	again := sh.mustShare("alice", "bob", store.RoleEditor)
	if again.ID != first.ID {
		t.Fatalf("re-sharing made grant %s, want %s replaced", again.ID, first.ID)
	}
	if got := sh.holders(); !slices.Equal(got, []string{"bob", "carol"}) {
		t.Fatalf("holders = %q, want one grant each", got)
	}
	if got := sh.role("carol"); got != int(store.RoleEditor) {
		t.Fatalf("carol's role = %d, want editor", got)
	}
}

func TestOnlyTheSharerOrAnOwnerRevokesAGrant(t *testing.T) {
	sh := newSharing(t, "alice", "bob", "carol", "dave")
	sh.mustShare("alice", "bob", store.RoleEditor)
	sh.mustShare("alice", "carol", store.RoleEditor)
	sh.mustShare("bob", "dave", store.RoleViewer)
	dropped, err := sh.s.Unshare(context.Background(), sh.gadget, sh.users["carol"], sh.users["dave"])
	if err != nil || len(dropped) != 0 {
		t.Fatalf("carol revoking bob's grant to dave: %+v, %v; want nothing revoked", dropped, err)
	}
	if got := sh.role("dave"); got != int(store.RoleViewer) {
		t.Fatalf("dave's role after carol's attempt = %d", got)
	}
	if dropped, err := sh.s.Unshare(context.Background(), sh.gadget, sh.users["bob"], sh.users["dave"]); err != nil || len(dropped) != 1 {
		t.Fatalf("bob revoking his own grant: %+v, %v", dropped, err)
	}
}

func TestDeletingAGadgetDeletesItsGrants(t *testing.T) {
	sh := newSharing(t, "alice", "bob", "carol")
	sh.mustShare("alice", "bob", store.RoleEditor)
	sh.mustShare("bob", "carol", store.RoleViewer)
	before := sh.s.ShareChanges()
	if err := sh.s.DeleteGadget(context.Background(), sh.gadget); err != nil {
		t.Fatal(err)
	}
	if got := sh.holders(); len(got) != 0 {
		t.Fatalf("grants of a deleted gadget: %q", got)
	}
	for _, name := range []string{"bob", "carol"} {
		if got := sh.sharedWith(name); len(got) != 0 {
			t.Fatalf("%s still reaches %+v", name, got)
		}
	}
	if sh.s.ShareChanges() <= before {
		t.Fatal("ShareChanges did not grow when the gadget's grants were deleted")
	}
}

func TestGrantsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	s := openStore(t, path)
	alice, _ := s.CreateUser(ctx, "alice")
	bob, _ := s.CreateUser(ctx, "bob")
	id := store.NewID()
	if err := s.CreateGadget(ctx, store.GadgetRecord{ID: id, OwnerID: alice.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Share(ctx, id, alice.ID, bob.ID, store.RoleEditor); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path)
	if a, err := s.Access(ctx, id, bob.ID); err != nil || a.Role != store.RoleEditor {
		t.Fatalf("bob's access after reopen: %+v, %v", a, err)
	}
}

// A chain's stamp, as Access gives it, stays while the chain only gains
// (a raise) and changes for good once a grant along it was lowered, even
// if raised back; it is gone once a grant along it is revoked.
func TestAChainsStampChangesForGoodWhenAGrantAlongItIsLowered(t *testing.T) {
	ctx := context.Background()
	sh := newSharing(t, "alice", "bob", "carol")
	sh.mustShare("alice", "bob", store.RoleEditor)
	sh.mustShare("bob", "carol", store.RoleEditor)
	access := func(name string) store.GadgetAccess {
		a, err := sh.s.Access(ctx, sh.gadget, sh.users[name])
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	carol := access("carol")
	stampNow := func() string {
		stamp, err := sh.s.ChainStamp(ctx, carol.Via.ID)
		if err != nil {
			t.Fatal(err)
		}
		return stamp
	}
	if carol.Stamp == "" || stampNow() != carol.Stamp {
		t.Fatalf("carol's stamp %q, now %q; want the same, not empty", carol.Stamp, stampNow())
	}
	sh.mustShare("alice", "bob", store.RoleOwner)
	if got := stampNow(); got != carol.Stamp {
		t.Fatalf("after raising bob: %q, want unchanged %q", got, carol.Stamp)
	}
	sh.mustShare("alice", "bob", store.RoleViewer)
	sh.mustShare("alice", "bob", store.RoleEditor)
	if got := stampNow(); got == carol.Stamp {
		t.Fatalf("after lowering bob and raising him back: %q unchanged", got)
	}
	if got := access("carol").Stamp; got != stampNow() {
		t.Fatalf("Access's stamp %q, ChainStamp's %q", got, stampNow())
	}
	if _, err := sh.s.Unshare(ctx, sh.gadget, sh.users["alice"], sh.users["bob"]); err != nil {
		t.Fatal(err)
	}
	if _, err := sh.s.ChainStamp(ctx, carol.Via.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after revoking bob: %v, want ErrNotFound", err)
	}
}

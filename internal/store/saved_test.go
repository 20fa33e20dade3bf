package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/store"
)

// save keeps a token of the sharing gadget for name, under a hash made of
// secret, at role.
func (sh *sharing) save(name, secret string, role store.Role, maxPerUser int) (store.Saved, error) {
	sv := store.Saved{UserID: sh.users[name], GadgetID: sh.gadget, Kind: store.SavedSession, Role: role, CreatedAt: time.Now()}
	return sh.s.AddSaved(context.Background(), store.KeyedHash(linkKey, []byte(secret)), sv, maxPerUser)
}

func (sh *sharing) mustSave(name, secret string, role store.Role) store.Saved {
	sh.t.Helper()
	sv, err := sh.save(name, secret, role, 0)
	if err != nil {
		sh.t.Fatalf("%s saving at %s: %v", name, role, err)
	}
	return sv
}

// restored is the role secret restores, or -1 if it restores nothing.
func (sh *sharing) restored(secret string) int {
	sh.t.Helper()
	_, a, err := sh.s.Restore(context.Background(), store.KeyedHash(linkKey, []byte(secret)))
	if errors.Is(err, store.ErrNotFound) {
		return -1
	}
	if err != nil {
		sh.t.Fatal(err)
	}
	return int(a.Role)
}

func TestASavedTokenRestoresTheLesserOfItsRoleAndTheSaversRoleNow(t *testing.T) {
	sh := newSharing(t, "alice", "bob")
	sh.mustShare("alice", "bob", store.RoleEditor)
	sh.mustSave("bob", "editor", store.RoleEditor)
	sh.mustSave("bob", "viewer", store.RoleViewer)
	if _, err := sh.save("bob", "owner", store.RoleOwner, 0); !errors.Is(err, store.ErrDenied) {
		t.Fatalf("saving above one's role: %v, want ErrDenied", err)
	}
	if got := sh.restored("editor"); got != int(store.RoleEditor) {
		t.Fatalf("the editor token restores %d", got)
	}
	if got := sh.restored("viewer"); got != int(store.RoleViewer) {
		t.Fatalf("the viewer token restores %d", got)
	}
	sh.mustShare("alice", "bob", store.RoleViewer) // lowered in place
	if got := sh.restored("editor"); got != int(store.RoleViewer) {
		t.Fatalf("the editor token of a saver lowered to viewer restores %d", got)
	}
}

// TestASavedTokenDiesWithTheGrantItWasSavedThrough: revoked and given
// again, the saver's access is a new grant, and the old token stays dead.
func TestASavedTokenDiesWithTheGrantItWasSavedThrough(t *testing.T) {
	sh := newSharing(t, "alice", "bob", "carol")
	sh.mustShare("alice", "bob", store.RoleEditor)
	sh.mustShare("bob", "carol", store.RoleViewer)
	sh.mustSave("carol", "carol's", store.RoleViewer)
	if _, err := sh.s.Unshare(context.Background(), sh.gadget, sh.users["alice"], sh.users["bob"]); err != nil {
		t.Fatal(err)
	}
	if got := sh.restored("carol's"); got != -1 {
		t.Fatalf("the token of a saver whose sharer was revoked restores %d", got)
	}
	sh.mustShare("alice", "carol", store.RoleViewer)
	if got := sh.restored("carol's"); got != -1 {
		t.Fatalf("the token came back with a new share: restores %d", got)
	}
}

func TestSavedTokensAreBoundPerUser(t *testing.T) {
	sh := newSharing(t, "alice", "bob")
	for _, secret := range []string{"a", "b"} {
		if _, err := sh.save("alice", secret, store.RoleOwner, 2); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sh.save("alice", "c", store.RoleOwner, 2); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("a third token past a bound of 2: %v, want ErrLimit", err)
	}
	sh.mustShare("alice", "bob", store.RoleViewer)
	if _, err := sh.save("bob", "d", store.RoleViewer, 2); err != nil {
		t.Fatalf("another user's token: %v", err)
	}
}

// TestADeadTokenIsNeitherListedNorCounted: bob's tokens die with his
// share; re-shared, he sees none of them and has the whole bound again.
func TestADeadTokenIsNeitherListedNorCounted(t *testing.T) {
	sh := newSharing(t, "alice", "bob")
	ctx := context.Background()
	sh.mustShare("alice", "bob", store.RoleEditor)
	for _, secret := range []string{"a", "b"} {
		if _, err := sh.save("bob", secret, store.RoleEditor, 2); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sh.s.Unshare(ctx, sh.gadget, sh.users["alice"], sh.users["bob"]); err != nil {
		t.Fatal(err)
	}
	sh.mustShare("alice", "bob", store.RoleEditor)
	if list, _ := sh.s.SavedOf(ctx, sh.users["bob"]); len(list) != 0 {
		t.Fatalf("bob lists his dead tokens %+v", list)
	}
	for _, secret := range []string{"c", "d"} {
		if _, err := sh.save("bob", secret, store.RoleEditor, 2); err != nil {
			t.Fatalf("saving with only dead tokens kept: %v", err)
		}
	}
	if list, _ := sh.s.SavedOf(ctx, sh.users["bob"]); len(list) != 2 {
		t.Fatalf("bob lists %d tokens, want the 2 live ones", len(list))
	}
	if got := sh.restored("a"); got != -1 {
		t.Fatalf("a pruned token restores %d", got)
	}
}

func TestOnlyTheSaverDropsTheirToken(t *testing.T) {
	sh := newSharing(t, "alice", "bob")
	sv := sh.mustSave("alice", "a", store.RoleOwner)
	ctx := context.Background()
	if err := sh.s.DropSaved(ctx, sh.users["bob"], sv.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bob dropping alice's token: %v, want ErrNotFound", err)
	}
	if got := sh.restored("a"); got != int(store.RoleOwner) {
		t.Fatalf("after bob's attempt the token restores %d", got)
	}
	before := sh.s.SavedDrops()
	if err := sh.s.DropSaved(ctx, sh.users["alice"], sv.ID); err != nil {
		t.Fatal(err)
	}
	if sh.s.SavedDrops() == before {
		t.Fatal("a drop was not counted")
	}
	if got := sh.restored("a"); got != -1 {
		t.Fatalf("a dropped token restores %d", got)
	}
	if list, _ := sh.s.SavedOf(ctx, sh.users["alice"]); len(list) != 0 {
		t.Fatalf("alice still lists %+v", list)
	}
}

func TestRemovingAGadgetDropsItsSavedTokens(t *testing.T) {
	sh := newSharing(t, "alice")
	sh.mustSave("alice", "a", store.RoleOwner)
	before := sh.s.SavedDrops()
	ctx := context.Background()
	if err := sh.s.DeleteGadget(ctx, sh.gadget); err != nil {
		t.Fatal(err)
	}
	if sh.s.SavedDrops() == before {
		t.Fatal("the gadget's removal was not counted as a drop")
	}
	if list, _ := sh.s.SavedOf(ctx, sh.users["alice"]); len(list) != 0 {
		t.Fatalf("alice still lists %+v", list)
	}
	if got := sh.restored("a"); got != -1 {
		t.Fatalf("a removed gadget's token restores %d", got)
	}
}

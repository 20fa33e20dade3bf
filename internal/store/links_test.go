package store_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/store"
)

var (
	linkKey = bytes.Repeat([]byte{7}, 32)
	noLimit = store.LinkLimits{PerGadget: 100, PerCreator: 100}
)

// link creates a link from creator, with secret, giving role.
func (sh *sharing) link(creator, secret string, role store.Role, terms store.LinkTerms) (store.Grant, error) {
	return sh.s.CreateLink(context.Background(), sh.gadget, sh.users[creator], store.LinkHolder(linkKey, []byte(secret)), role, terms, time.Now(), noLimit)
}

func (sh *sharing) mustLink(creator, secret string, role store.Role, terms store.LinkTerms) store.Grant {
	sh.t.Helper()
	l, err := sh.link(creator, secret, role, terms)
	if err != nil {
		sh.t.Fatalf("%s creating a %s link: %v", creator, role, err)
	}
	return l
}

func (sh *sharing) redeemAt(name, secret string, now time.Time) (bool, error) {
	_, redeemed, err := sh.s.Redeem(context.Background(), store.LinkHolder(linkKey, []byte(secret)), sh.users[name], now)
	return redeemed, err
}

func (sh *sharing) mustRedeem(name, secret string) {
	sh.t.Helper()
	if redeemed, err := sh.redeemAt(name, secret, time.Now()); err != nil || !redeemed {
		sh.t.Fatalf("%s redeeming: redeemed %v, %v", name, redeemed, err)
	}
}

func TestALinkIsStoredOnlyAsItsKeyedHash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	sh := &sharing{t: t, s: openStore(t, path), gadget: store.NewID(), users: map[string]string{}}
	ctx := context.Background()
	for _, n := range []string{"alice", "bob"} {
		u, err := sh.s.CreateUser(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		sh.users[n] = u.ID
	}
	if err := sh.s.CreateGadget(ctx, store.GadgetRecord{ID: sh.gadget, OwnerID: sh.users["alice"]}); err != nil {
		t.Fatal(err)
	}
	secret := "the-secret-of-this-link-0123456789"
	sh.mustLink("alice", secret, store.RoleViewer, store.LinkTerms{Label: "for the team"})
	sh.mustRedeem("bob", secret)
	if other := store.LinkHolder(bytes.Repeat([]byte{8}, 32), []byte(secret)); other == store.LinkHolder(linkKey, []byte(secret)) {
		t.Fatal("a link's holder does not depend on the key")
	}
	sh.s.Close()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(file, []byte(secret)) {
		t.Fatal("the link's secret is in the database file")
	}
	if !bytes.Contains(file, []byte(store.LinkHolder(linkKey, []byte(secret)))) {
		t.Fatal("the link's keyed hash is not in the database file: the scan is blind")
	}
}

func TestRevokingALinkEndsEveryRedemptionAndWhatWasSharedOnIt(t *testing.T) {
	sh := newSharing(t, "alice", "bob", "carol", "dave", "erin")
	l := sh.mustLink("alice", "s", store.RoleEditor, store.LinkTerms{})
	sh.mustRedeem("bob", "s")
	sh.mustRedeem("carol", "s")
	sh.mustShare("carol", "dave", store.RoleViewer)
	sh.mustShare("alice", "erin", store.RoleViewer)
	for name, want := range map[string]int{"bob": int(store.RoleEditor), "carol": int(store.RoleEditor), "dave": int(store.RoleViewer)} {
		if got := sh.role(name); got != want {
			t.Fatalf("%s's role through the link = %d, want %d", name, got, want)
		}
	}
	if _, err := sh.s.RevokeLink(context.Background(), sh.gadget, sh.users["bob"], l.ID); !errors.Is(err, store.ErrDenied) {
		t.Fatalf("a redeemer revoking the link: %v, want ErrDenied", err)
	}
	dropped, err := sh.s.RevokeLink(context.Background(), sh.gadget, sh.users["alice"], l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 4 {
		t.Fatalf("revoking the link dropped %d grants, want the link, two redemptions and dave's share", len(dropped))
	}
	for name, want := range map[string]int{"bob": -1, "carol": -1, "dave": -1, "erin": int(store.RoleViewer)} {
		if got := sh.role(name); got != want {
			t.Errorf("%s's role after revoking the link = %d, want %d", name, got, want)
		}
	}
	if _, err := sh.redeemAt("erin", "s", time.Now()); !errors.Is(err, store.ErrLinkInvalid) {
		t.Fatalf("redeeming a revoked link: %v, want ErrLinkInvalid", err)
	}
}

func TestALinkIsWorthNoMoreThanItsCreatorHolds(t *testing.T) {
	sh := newSharing(t, "alice", "bob", "carol")
	sh.mustShare("alice", "bob", store.RoleEditor)
	if _, err := sh.link("bob", "above", store.RoleOwner, store.LinkTerms{}); !errors.Is(err, store.ErrDenied) {
		t.Fatalf("an editor creating an owner link: %v, want ErrDenied", err)
	}
	sh.mustLink("bob", "s", store.RoleEditor, store.LinkTerms{})
	sh.mustRedeem("carol", "s")
	sh.mustShare("alice", "bob", store.RoleViewer) // bob lowered
	if got := sh.role("carol"); got != int(store.RoleViewer) {
		t.Fatalf("carol's role after bob was lowered to viewer = %d, want viewer", got)
	}
	if _, err := sh.link("bob", "viewer's", store.RoleViewer, store.LinkTerms{}); !errors.Is(err, store.ErrDenied) {
		t.Fatalf("a viewer creating a link: %v, want ErrDenied", err)
	}
	if _, err := sh.s.Unshare(context.Background(), sh.gadget, sh.users["alice"], sh.users["bob"]); err != nil {
		t.Fatal(err)
	}
	if got := sh.role("carol"); got != -1 {
		t.Fatalf("carol's role after bob's share was revoked = %d, want none", got)
	}
}

func TestExpiredConsumedAndRevokedLinksFailAlike(t *testing.T) {
	sh := newSharing(t, "alice", "bob", "carol", "dave")
	now := time.Now()
	sh.mustLink("alice", "expiring", store.RoleViewer, store.LinkTerms{ExpiresAt: now.Add(time.Hour)})
	sh.mustLink("alice", "once", store.RoleViewer, store.LinkTerms{SingleUse: true})
	if _, err := sh.redeemAt("bob", "expiring", now.Add(time.Hour)); !errors.Is(err, store.ErrLinkInvalid) {
		t.Fatalf("redeeming an expired link: %v, want ErrLinkInvalid", err)
	}
	if _, err := sh.redeemAt("dave", "expiring", now.Add(time.Hour-time.Millisecond)); err != nil {
		t.Fatalf("redeeming a link just before it expires: %v", err)
	}
	sh.mustRedeem("bob", "once")
	if _, err := sh.redeemAt("carol", "once", now); !errors.Is(err, store.ErrLinkInvalid) {
		t.Fatalf("replaying a single-use link: %v, want ErrLinkInvalid", err)
	}
	if _, err := sh.redeemAt("carol", "never made", now); !errors.Is(err, store.ErrLinkInvalid) {
		t.Fatalf("redeeming an unknown link: %v, want ErrLinkInvalid", err)
	}
	if got := sh.role("bob"); got != int(store.RoleViewer) {
		t.Fatalf("bob's role after redeeming = %d: expiry and consumption end redeeming, not what was redeemed", got)
	}
}

func TestRedeemingWithNothingToGainChangesNothing(t *testing.T) {
	sh := newSharing(t, "alice", "bob")
	sh.mustShare("alice", "bob", store.RoleEditor)
	sh.mustLink("alice", "once", store.RoleViewer, store.LinkTerms{SingleUse: true})
	before := sh.s.ShareChanges()
	for _, name := range []string{"alice", "bob"} {
		if redeemed, err := sh.redeemAt(name, "once", time.Now()); err != nil || redeemed {
			t.Fatalf("%s redeeming a link worth no more than they hold: redeemed %v, %v; want a no-op", name, redeemed, err)
		}
	}
	if sh.s.ShareChanges() != before {
		t.Fatal("a no-op redemption changed the grants")
	}
}

func TestConcurrentRedemptionsOfASingleUseLinkHaveOneWinner(t *testing.T) {
	names := []string{"alice", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"}
	sh := newSharing(t, names...)
	sh.mustLink("alice", "once", store.RoleEditor, store.LinkTerms{SingleUse: true})
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, name := range names[1:] {
		wg.Go(func() { _, errs[i] = sh.redeemAt(name, "once", time.Now()) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs[:len(names)-1] {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrLinkInvalid):
			t.Fatal(err)
		}
	}
	if won != 1 {
		t.Fatalf("%d redemptions of a single-use link succeeded, want 1", won)
	}
}

func TestLinkBoundsCountRedeemableLinksAndDeadOnesArePruned(t *testing.T) {
	sh := newSharing(t, "alice", "bob")
	ctx := context.Background()
	lim := store.LinkLimits{PerGadget: 3, PerCreator: 2}
	now := time.Now()
	create := func(by, secret string, terms store.LinkTerms) error {
		_, err := sh.s.CreateLink(ctx, sh.gadget, sh.users[by], store.LinkHolder(linkKey, []byte(secret)), store.RoleViewer, terms, now, lim)
		return err
	}
	sh.mustShare("alice", "bob", store.RoleEditor)
	for _, s := range []string{"a1", "a2"} {
		if err := create("alice", s, store.LinkTerms{ExpiresAt: now.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := create("alice", "a3", store.LinkTerms{}); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("a third link of one creator: %v, want ErrLimit", err)
	}
	if err := create("bob", "b1", store.LinkTerms{}); err != nil {
		t.Fatal(err)
	}
	if err := create("bob", "b2", store.LinkTerms{}); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("a fourth link on one gadget: %v, want ErrLimit", err)
	}
	now = now.Add(time.Minute) // alice's links expire
	if err := create("alice", "a4", store.LinkTerms{}); err != nil {
		t.Fatalf("a link after the creator's others expired: %v", err)
	}
	links, err := sh.s.Links(ctx, sh.gadget)
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != 2 {
		t.Fatalf("%d links stored, want b1 and a4: the expired ones, with no redemptions, pruned", len(links))
	}
}

// A link redeems only while its creator may make links: not once they are
// a viewer, and again once they are an editor.
func TestALinkRedeemsOnlyWhileItsCreatorMayMakeLinks(t *testing.T) {
	sh := newSharing(t, "alice", "bob", "carol", "dave")
	sh.mustShare("alice", "bob", store.RoleEditor)
	sh.mustLink("bob", "s1", store.RoleViewer, store.LinkTerms{})
	sh.mustRedeem("carol", "s1")
	sh.mustShare("alice", "bob", store.RoleViewer)
	if _, err := sh.redeemAt("dave", "s1", time.Now()); !errors.Is(err, store.ErrLinkInvalid) {
		t.Fatalf("redeeming a viewer's link: %v, want ErrLinkInvalid", err)
	}
	if got := sh.role("carol"); got != int(store.RoleViewer) {
		t.Fatalf("carol's redemption: role %d, want viewer", got)
	}
	sh.mustShare("alice", "bob", store.RoleEditor)
	sh.mustRedeem("dave", "s1")
}

// A share from a link's creator to one who redeemed it is a grant of its
// own: the holder's role is the better of the two, and revoking the link
// drops the redemption and what hangs below it, not the share; unsharing
// drops both.
func TestAShareToARedeemerLeavesTheRedemptionBelowTheLink(t *testing.T) {
	ctx := context.Background()
	sh := newSharing(t, "alice", "bob", "carol")
	l := sh.mustLink("alice", "s1", store.RoleEditor, store.LinkTerms{})
	sh.mustRedeem("bob", "s1")
	sh.mustShare("bob", "carol", store.RoleViewer)
	sh.mustShare("alice", "bob", store.RoleViewer)
	if got := sh.role("bob"); got != int(store.RoleEditor) {
		t.Fatalf("bob's role: %d, want editor, the redemption's", got)
	}
	dropped, err := sh.s.RevokeLink(ctx, sh.gadget, sh.users["alice"], l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 3 {
		t.Fatalf("revoking the link dropped %d grants, want the link, bob's redemption and carol's share", len(dropped))
	}
	if got, want := []int{sh.role("bob"), sh.role("carol")}, []int{int(store.RoleViewer), -1}; got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("bob's and carol's roles after revoking the link: %d, want %d", got, want)
	}

	// Both grants are the creator's: unsharing ends both.
	sh = newSharing(t, "alice", "bob")
	sh.mustLink("alice", "s2", store.RoleEditor, store.LinkTerms{})
	sh.mustRedeem("bob", "s2")
	sh.mustShare("alice", "bob", store.RoleViewer)
	if dropped, err := sh.s.Unshare(ctx, sh.gadget, sh.users["alice"], sh.users["bob"]); err != nil || len(dropped) != 2 || sh.role("bob") != -1 {
		t.Fatalf("alice unsharing bob: dropped %d, %v; bob's role %d; want both grants gone", len(dropped), err, sh.role("bob"))
	}
}

package server_test

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/schema"
)

// The tests here page through Workspace.gadgets: a listing comes a page at a
// time, so that however many gadgets others share with a user, each answer
// stays inside the message limit and the connection's export bound.

// entry is what a test keeps of one listed gadget.
type entry struct {
	id, sharedBy string
	createdAt    int64
	role         schema.Role
}

// before orders entries as the listing does: oldest first, then by id.
func (e entry) before(o entry) bool {
	return cmp.Or(cmp.Compare(e.createdAt, o.createdAt), strings.Compare(e.id, o.id)) < 0
}

// page asks ws for the page after cursor after, of at most limit gadgets,
// checks that each entry's capability is its gadget at its role, and
// releases the page.
func page(t *testing.T, ws schema.Workspace, after string, limit uint32) ([]entry, string, error) {
	t.Helper()
	f, release := ws.Gadgets(testCtx(t), func(p schema.Workspace_gadgets_Params) error {
		p.SetLimit(limit)
		return p.SetAfter(after)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return nil, "", err
	}
	list, _ := res.Gadgets()
	var out []entry
	for i := range list.Len() {
		info, _ := list.At(i).Info()
		id, _ := info.Id()
		by, _ := info.SharedBy()
		e := entry{id: id, sharedBy: by, createdAt: info.CreatedAt(), role: info.Role()}
		if role, err := infoRole(t, list.At(i).Gadget()); err != nil || role != e.role {
			t.Fatalf("the capability listed with %s: role %v, %v; its entry says %v", id, role, err, e.role)
		}
		out = append(out, e)
	}
	next, _ := res.Next()
	return out, next, nil
}

// mustPage is page for a call that must succeed.
func mustPage(t *testing.T, ws schema.Workspace, after string, limit uint32) ([]entry, string) {
	t.Helper()
	got, next, err := page(t, ws, after, limit)
	if err != nil {
		t.Fatalf("gadgets after %q, limit %d: %v", after, limit, err)
	}
	return got, next
}

// pages pages through ws's listing from cursor after to the end, limit
// gadgets at a time; each page but the last must be full, and each must go
// on from where the one before ended.
func pages(t *testing.T, ws schema.Workspace, after string, limit uint32) []entry {
	t.Helper()
	var out []entry
	for {
		got, next := mustPage(t, ws, after, limit)
		out = append(out, got...)
		requireOrdered(t, out)
		if next == "" {
			return out
		}
		if len(got) != int(limit) {
			t.Fatalf("a page of %d with a next, at limit %d", len(got), limit)
		}
		after = next
	}
}

func ids(es []entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.id
	}
	return out
}

// requireOrdered fails unless es is strictly in the listing's order, so no
// gadget is listed twice.
func requireOrdered(t *testing.T, es []entry) {
	t.Helper()
	for i := 1; i < len(es); i++ {
		if !es[i-1].before(es[i]) {
			t.Fatalf("entry %d (%s) is not after entry %d (%s)", i, es[i].id, i-1, es[i-1].id)
		}
	}
}

func TestPagingThroughTheWorkspaceListsEachGadgetOnceInOrder(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	// Seven gadgets, alice's own and shared with her by bob and carol,
	// created in turns so that the pages mix them.
	want := map[string]entry{}
	for i, who := range []string{"alice", "bob", "carol", "alice", "bob", "alice", "carol"} {
		g, id := create(t, ws[who], "counter")
		e := entry{id: id, role: schema.Role_owner}
		if who != "alice" {
			e.sharedBy, e.role = who, []schema.Role{schema.Role_viewer, schema.Role_editor}[i%2]
			mustShare(t, g, "alice", e.role)
		}
		want[id] = e
	}
	whole, next := mustPage(t, ws["alice"], "", 1000)
	if len(whole) != len(want) || next != "" {
		t.Fatalf("one page of 1000: %d gadgets and next %q, want %d and none", len(whole), next, len(want))
	}
	requireOrdered(t, whole)
	for _, limit := range []uint32{1, 2, 3, 7} {
		got := pages(t, ws["alice"], "", limit)
		if !slices.Equal(ids(got), ids(whole)) {
			t.Fatalf("pages of %d listed %v, want %v", limit, ids(got), ids(whole))
		}
		for _, e := range got {
			if w, ok := want[e.id]; !ok || e.sharedBy != w.sharedBy || e.role != w.role {
				t.Fatalf("pages of %d: %s shared by %q as %v, want by %q as %v", limit, e.id, e.sharedBy, e.role, w.sharedBy, w.role)
			}
		}
	}
}

func TestALimitOfZeroListsAPageOfAHundred(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	for range 5 {
		create(t, ws, "counter")
	}
	got, next := mustPage(t, ws, "", 0)
	if len(got) != 5 || next != "" {
		t.Fatalf("limit 0 of 5 gadgets: %d and next %q, want all 5 and no next", len(got), next)
	}
}

// Others' shares are not bounded by a user's own quota (100 gadgets): the
// listing still answers, a hundred at a time.
func TestAUserReachingMoreThanAHundredGadgetsGetsAHundredAndANext(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	for _, who := range []string{"alice", "bob", "carol"} {
		for range 40 {
			g, _ := create(t, ws[who], "counter")
			if who != "alice" {
				mustShare(t, g, "alice", schema.Role_viewer)
			}
		}
	}
	first, next := mustPage(t, ws["alice"], "", 0)
	if len(first) != 100 || next == "" {
		t.Fatalf("limit 0 of 120 gadgets: %d and next %q, want 100 and a next", len(first), next)
	}
	rest, last := mustPage(t, ws["alice"], next, 0)
	if len(rest) != 20 || last != "" {
		t.Fatalf("the page after 100 of 120: %d and next %q, want 20 and no next", len(rest), last)
	}
	requireOrdered(t, append(first, rest...))
}

func TestALimitOverAThousandIsRefusedNamingTheBound(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	create(t, ws, "counter")
	_, _, err := page(t, ws, "", 5000)
	requireErrorContains(t, err, "limit 5000 is more than 1000, the most one page holds")
	if got, _ := mustPage(t, ws, "", 1000); len(got) != 1 {
		t.Fatalf("limit 1000 listed %d gadgets, want 1", len(got))
	}
}

func TestAMalformedCursorIsRefusedClearly(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	create(t, ws, "counter")
	create(t, ws, "counter")
	_, good := mustPage(t, ws, "", 1)
	if good == "" {
		t.Fatal("a page of 1 of 2 gadgets has no next")
	}
	b64 := base64.RawURLEncoding.EncodeToString
	for name, after := range map[string]string{
		"not base64":        "not a cursor!",
		"padded base64":     good + "==",
		"other text":        b64([]byte("hello")),
		"another tag":       b64([]byte("tokens1.1700000000000000000.abcdefgh")),
		"a time not a time": b64([]byte("gadgets1.soon.abcdefgh")),
		"an id not an id":   b64([]byte("gadgets1.1700000000000000000.ABC/../x")),
		"no id":             b64([]byte("gadgets1.1700000000000000000.")),
		"a part too many":   b64([]byte("gadgets1.1.abcdefgh.x")),
		"far too long":      strings.Repeat("A", 4000),
		"a cut cursor":      good[:len(good)/2],
	} {
		if _, _, err := page(t, ws, after, 0); err == nil || !strings.Contains(err.Error(), "after is not a cursor of this listing") {
			t.Errorf("%s (%q): %v, want it refused as not a cursor", name, after, err)
		}
	}
	if _, _, err := page(t, ws, good, 0); err != nil {
		t.Fatalf("the cursor the server gave: %v", err)
	}
}

// A cursor is a position, not a gadget: removing the gadget it was taken at,
// or those after it, does not break it, and gadgets created since come at
// the end.
func TestAGadgetRemovedBetweenPagesIsSkippedAndOneCreatedSinceComesLater(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	for range 5 {
		create(t, ws["alice"], "counter")
	}
	// A shared gadget, unshared between pages, goes like a removed one.
	shared, sharedID := create(t, ws["bob"], "counter")
	mustShare(t, shared, "alice", schema.Role_editor)
	whole := pages(t, ws["alice"], "", 1000)

	first, next := mustPage(t, ws["alice"], "", 2)
	if !slices.Equal(ids(first), ids(whole[:2])) || next == "" {
		t.Fatalf("first page %v next %q, want %v and a next", ids(first), next, ids(whole[:2]))
	}
	// The gadget the cursor was taken at goes, and the first after it.
	gone := []string{whole[1].id, whole[2].id, sharedID}
	for _, id := range gone {
		if id == sharedID {
			if _, err := unshare(t, shared, "alice"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		f, release := removeByID(testCtx(t), ws["alice"], id)
		if _, err := f.Struct(); err != nil {
			t.Fatalf("removing %s: %v", id, err)
		}
		release()
	}
	// Creation times are milliseconds, ties broken by id: the new gadget
	// comes last once the clock has left the newest gadget's millisecond.
	for time.Now().UnixMilli() <= whole[len(whole)-1].createdAt {
		time.Sleep(time.Millisecond)
	}
	_, newer := create(t, ws["alice"], "counter")

	rest := pages(t, ws["alice"], next, 2)
	var want []string
	for _, e := range whole[3:] {
		if !slices.Contains(gone, e.id) {
			want = append(want, e.id)
		}
	}
	want = append(want, newer)
	if !slices.Equal(ids(rest), want) {
		t.Fatalf("after the first page: %v, want %v (%v removed or unshared, %s new)", ids(rest), want, gone, newer)
	}
}

// A cursor names a place in the order and nothing else: another user's
// cursor gives a user only their own gadgets after that place, and an empty
// workspace nothing.
func TestAnotherUsersCursorRevealsNothingOfTheirGadgets(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	owner := map[string]string{}
	for _, who := range []string{"alice", "bob", "alice", "bob", "alice", "bob"} {
		_, id := create(t, ws[who], "counter")
		owner[id] = who
	}
	alices, next := mustPage(t, ws["alice"], "", 1)
	if next == "" {
		t.Fatal("alice's page of 1 of 3 has no next")
	}
	at := alices[0]
	var want []string
	for _, e := range pages(t, ws["bob"], "", 1000) {
		if at.before(e) {
			want = append(want, e.id)
		}
	}
	got, bobsNext := mustPage(t, ws["bob"], next, 1000)
	for _, e := range got {
		if owner[e.id] != "bob" {
			t.Fatalf("alice's cursor listed %s (%s's) to bob", e.id, owner[e.id])
		}
	}
	if !slices.Equal(ids(got), want) || bobsNext != "" {
		t.Fatalf("bob after alice's cursor: %v next %q, want %v (his after it) and no next", ids(got), bobsNext, want)
	}
	if got, next := mustPage(t, ws["carol"], next, 0); len(got) != 0 || next != "" {
		t.Fatalf("carol, who has no gadgets, after alice's cursor: %v next %q", ids(got), next)
	}
	if got, next := mustPage(t, ws["carol"], "", 0); len(got) != 0 || next != "" {
		t.Fatalf("carol's empty listing: %v next %q", ids(got), next)
	}
}

package notestest

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/examples/notes/notespb"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/leakcheck"
	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

const notesPkg = "github.com/gadgetd/gadgetd/examples/notes"

// env is one test host, whose storage outlives the gadgets made on it, and
// the Runtime and compiled notes module every test shares.
type env struct {
	t    *testing.T
	rt   *wasmhost.Runtime
	mod  *wasmhost.Module
	host *memhost.Host
}

// shared is compiled once per test binary: compiling the module is the
// slowest step of a test.
var shared struct {
	sync.Mutex
	rt  *wasmhost.Runtime
	mod *wasmhost.Module
}

func TestMain(m *testing.M) {
	leakcheck.Install()
	code := m.Run()
	if shared.rt != nil {
		shared.mod.Close(context.Background())
		shared.rt.Close(context.Background())
	}
	wasmbuild.RemoveAll()
	os.Exit(leakcheck.Verify(code))
}

func newEnv(t *testing.T, maxTotal int) *env {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.rt == nil {
		wasm := wasmbuild.ForTest(t, notesPkg)
		rt, err := wasmhost.New(ctx, wasmhost.WithCallTimeout(20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		mod, err := rt.Compile(ctx, wasm)
		if err != nil {
			rt.Close(ctx)
			t.Fatal(err)
		}
		shared.rt, shared.mod = rt, mod
	}
	return &env{t: t, rt: shared.rt, mod: shared.mod, host: memhost.New(memhost.WithMaxTotalBytes(maxTotal))}
}

// gadget starts a gadget on the env's host storage.
func (e *env) gadget() *wasmhost.Sandbox {
	g := e.rt.NewSandbox(e.mod, e.host.Client(), wasmhost.WithName("notes"), wasmhost.WithCallScope(e.host.Begin))
	e.t.Cleanup(g.Close)
	return g
}

// open opens a session of g for a user with a role.
func open(t *testing.T, g *wasmhost.Sandbox, userID string, role schema.Role) notespb.Notes {
	t.Helper()
	s, err := tryOpen(g, userID, role)
	if err != nil {
		t.Fatalf("open as %q: %v", userID, err)
	}
	t.Cleanup(s.Release)
	return s
}

func tryOpen(g *wasmhost.Sandbox, userID string, role schema.Role) (notespb.Notes, error) {
	ctx := context.Background()
	guest := g.Guest()
	defer guest.Release()
	f, release := guest.Open(ctx, func(p schema.Guest_open_Params) error {
		c, err := p.NewCaller()
		if err != nil {
			return err
		}
		c.SetRole(role)
		// The permissions the server would compute from blueprint.json.
		manifest, err := blueprint.ReadManifest("..")
		if err != nil {
			return err
		}
		held := manifest.Access.Of(role)
		perms, err := c.NewPermissions(int32(len(held)))
		if err != nil {
			return err
		}
		for i, p := range held {
			if err := perms.Set(i, p); err != nil {
				return err
			}
		}
		if err := c.SetUserName("name of " + userID); err != nil {
			return err
		}
		return c.SetUserId(userID)
	})
	defer release()
	if _, err := f.Struct(); err != nil {
		return notespb.Notes{}, err
	}
	return notespb.Notes(f.Session().AddRef()), nil
}

// note is a decoded notespb.Note.
type note struct {
	ID               uint32
	Title, Body      string
	Created, Updated int64
}

func decode(t testing.TB, n notespb.Note) note {
	title, err := n.Title()
	if err != nil {
		t.Fatal(err)
	}
	body, err := n.Body()
	if err != nil {
		t.Fatal(err)
	}
	return note{ID: n.Id(), Title: title, Body: body, Created: n.CreatedAt(), Updated: n.UpdatedAt()}
}

func decodeList(t testing.TB, l notespb.Note_List, err error) []note {
	if err != nil {
		t.Fatal(err)
	}
	out := make([]note, l.Len())
	for i := range out {
		out[i] = decode(t, l.At(i))
	}
	return out
}

func ids(ns []note) []uint32 {
	out := make([]uint32, len(ns))
	for i, n := range ns {
		out[i] = n.ID
	}
	return out
}

var ctx = context.Background()

func add(t testing.TB, s notespb.Notes, title, body string) (note, error) {
	f, release := s.Add(ctx, func(p notespb.Notes_add_Params) error {
		if err := p.SetTitle(title); err != nil {
			return err
		}
		return p.SetBody(body)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return note{}, err
	}
	n, err := res.Note()
	if err != nil {
		return note{}, err
	}
	return decode(t, n), nil
}

func mustAdd(t testing.TB, s notespb.Notes, title, body string) note {
	t.Helper()
	n, err := add(t, s, title, body)
	if err != nil {
		t.Fatalf("add(%q): %v", title, err)
	}
	return n
}

func get(t testing.TB, s notespb.Notes, id uint32) (note, error) {
	f, release := s.Get(ctx, func(p notespb.Notes_get_Params) error { p.SetId(id); return nil })
	defer release()
	res, err := f.Struct()
	if err != nil {
		return note{}, err
	}
	n, err := res.Note()
	if err != nil {
		return note{}, err
	}
	return decode(t, n), nil
}

func update(t testing.TB, s notespb.Notes, id uint32, title, body string) (note, error) {
	f, release := s.Update(ctx, func(p notespb.Notes_update_Params) error {
		p.SetId(id)
		if err := p.SetTitle(title); err != nil {
			return err
		}
		return p.SetBody(body)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return note{}, err
	}
	n, err := res.Note()
	if err != nil {
		return note{}, err
	}
	return decode(t, n), nil
}

func remove(s notespb.Notes, id uint32) error {
	f, release := s.Remove(ctx, func(p notespb.Notes_remove_Params) error { p.SetId(id); return nil })
	defer release()
	_, err := f.Struct()
	return err
}

func list(t testing.TB, s notespb.Notes, limit, after uint32) ([]note, uint32, error) {
	f, release := s.List(ctx, func(p notespb.Notes_list_Params) error {
		p.SetLimit(limit)
		p.SetAfter(after)
		return nil
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return nil, 0, err
	}
	l, err := res.Notes()
	return decodeList(t, l, err), res.Next(), nil
}

func mustList(t testing.TB, s notespb.Notes, limit, after uint32) ([]note, uint32) {
	t.Helper()
	ns, next, err := list(t, s, limit, after)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	return ns, next
}

// listAll follows next to the end.
func listAll(t testing.TB, s notespb.Notes) []note {
	t.Helper()
	var all []note
	after := uint32(0)
	for {
		ns, next := mustList(t, s, 0, after)
		all = append(all, ns...)
		if next == 0 {
			return all
		}
		after = next
	}
}

func search(t testing.TB, s notespb.Notes, query string, limit, after uint32) ([]note, uint32, error) {
	f, release := s.Search(ctx, func(p notespb.Notes_search_Params) error {
		p.SetLimit(limit)
		p.SetAfter(after)
		return p.SetQuery(query)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return nil, 0, err
	}
	l, err := res.Notes()
	return decodeList(t, l, err), res.Next(), nil
}

func mustSearch(t testing.TB, s notespb.Notes, query string) []uint32 {
	t.Helper()
	ns, next, err := search(t, s, query, 0, 0)
	if err != nil {
		t.Fatalf("search(%q): %v", query, err)
	}
	if next != 0 {
		t.Fatalf("search(%q): next = %d on a short result", query, next)
	}
	return ids(ns)
}

func stats(t testing.TB, s notespb.Notes) (count uint32, bytes uint64) {
	t.Helper()
	f, release := s.Stats(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	return res.Count(), res.Bytes()
}

// wantErr fails unless err is an error whose text contains every one of
// want.
func wantErr(t testing.TB, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: succeeded, want an error containing %q", what, want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%s: error %q, want one containing %q", what, err, w)
		}
	}
}

func sameIDs(a []uint32, b ...uint32) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// userBytes is what the user's notes take in the host's committed storage.
func userBytes(h *memhost.Host, userID string) uint64 {
	n := 0
	for k, v := range h.Committed() {
		if strings.HasPrefix(k, "u/"+url.PathEscape(userID)+"/n/") {
			n += len(k) + len(v)
		}
	}
	return uint64(n)
}

func TestAddGetListSearchUpdateRemove(t *testing.T) {
	e := newEnv(t, 64<<20)
	s := open(t, e.gadget(), "alice", schema.Role_owner)

	before := time.Now().UnixMilli()
	n1 := mustAdd(t, s, "Groceries", "milk, eggs, Bread")
	n2 := mustAdd(t, s, "Ideas", "a gadget that waters plants")
	n3 := mustAdd(t, s, "bread recipe", "flour, water, salt")
	if n1.ID != 1 || n2.ID != 2 || n3.ID != 3 {
		t.Fatalf("ids = %d %d %d, want 1 2 3", n1.ID, n2.ID, n3.ID)
	}
	if n1.Title != "Groceries" || n1.Body != "milk, eggs, Bread" || n1.Created < before || n1.Updated != n1.Created {
		t.Fatalf("add returned %+v", n1)
	}

	if got, err := get(t, s, 2); err != nil || got != n2 {
		t.Fatalf("get(2) = %+v, %v; want %+v", got, err, n2)
	}

	// Newest first, paged.
	page, next := mustList(t, s, 0, 0)
	if !sameIDs(ids(page), 3, 2, 1) || next != 0 {
		t.Fatalf("list = %v next %d, want [3 2 1] next 0", ids(page), next)
	}
	page, next = mustList(t, s, 2, 0)
	if !sameIDs(ids(page), 3, 2) || next != 2 {
		t.Fatalf("list(limit 2) = %v next %d, want [3 2] next 2", ids(page), next)
	}
	page, next = mustList(t, s, 2, next)
	if !sameIDs(ids(page), 1) || next != 0 {
		t.Fatalf("list(limit 2, after 2) = %v next %d, want [1] next 0", ids(page), next)
	}
	// A page reads only what it returns plus one note, not the whole list.
	base := e.host.ListedEntries()
	mustList(t, s, 1, 0)
	if n := e.host.ListedEntries() - base; n > 2 {
		t.Fatalf("list(limit 1) read %d notes from storage, want at most 2", n)
	}

	// Search is case-insensitive over title and body.
	if got := mustSearch(t, s, "BREAD"); !sameIDs(got, 3, 1) {
		t.Fatalf(`search("BREAD") = %v, want [3 1] (title of 3, body of 1)`, got)
	}
	if got := mustSearch(t, s, "plants"); !sameIDs(got, 2) {
		t.Fatalf(`search("plants") = %v, want [2]`, got)
	}
	if got := mustSearch(t, s, "nowhere"); len(got) != 0 {
		t.Fatalf(`search("nowhere") = %v, want none`, got)
	}
	// Paging through matches.
	ns, next, err := search(t, s, "bread", 1, 0)
	if err != nil || !sameIDs(ids(ns), 3) || next != 3 {
		t.Fatalf(`search("bread", limit 1) = %v next %d, %v; want [3] next 3`, ids(ns), next, err)
	}
	ns, next, err = search(t, s, "bread", 1, next)
	if err != nil || !sameIDs(ids(ns), 1) || next != 0 {
		t.Fatalf(`search("bread", limit 1, after 3) = %v next %d, %v; want [1] next 0`, ids(ns), next, err)
	}

	// Update keeps id and createdAt.
	u, err := update(t, s, 2, "Ideas (v2)", "a gadget that waters plants, with Rain sensor")
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != 2 || u.Title != "Ideas (v2)" || u.Created != n2.Created || u.Updated < n2.Updated {
		t.Fatalf("update returned %+v (was %+v)", u, n2)
	}
	if got, _ := get(t, s, 2); got != u {
		t.Fatalf("get after update = %+v, want %+v", got, u)
	}
	if got := mustSearch(t, s, "rain"); !sameIDs(got, 2) {
		t.Fatalf(`search("rain") after update = %v, want [2]`, got)
	}

	// Remove.
	if err := remove(s, 1); err != nil {
		t.Fatal(err)
	}
	_, err = get(t, s, 1)
	wantErr(t, "get of a removed note", err, "notes: no note 1")
	wantErr(t, "removing it again", remove(s, 1), "notes: no note 1")
	_, err = update(t, s, 1, "back", "")
	wantErr(t, "updating it", err, "notes: no note 1")
	if page, _ := mustList(t, s, 0, 0); !sameIDs(ids(page), 3, 2) {
		t.Fatalf("list after remove = %v, want [3 2]", ids(page))
	}

	// Ids are never reused.
	if n := mustAdd(t, s, "after", ""); n.ID != 4 {
		t.Fatalf("add after a remove got id %d, want 4", n.ID)
	}

	// Stats agree with what is in storage.
	count, bytes := stats(t, s)
	if want := userBytes(e.host, "alice"); count != 3 || bytes != want {
		t.Fatalf("stats = %d notes, %d bytes; want 3, %d", count, bytes, want)
	}
}

func TestTwoSessionsOfOneUserShareNotes(t *testing.T) {
	e := newEnv(t, 64<<20)
	g := e.gadget()
	tab1 := open(t, g, "alice", schema.Role_owner)
	tab2 := open(t, g, "alice", schema.Role_editor)

	n := mustAdd(t, tab1, "from tab 1", "hello")
	if got, err := get(t, tab2, n.ID); err != nil || got != n {
		t.Fatalf("tab 2 get = %+v, %v; want %+v", got, err, n)
	}
	if _, err := update(t, tab2, n.ID, "edited in tab 2", "hello again"); err != nil {
		t.Fatal(err)
	}
	if got, _ := get(t, tab1, n.ID); got.Title != "edited in tab 2" {
		t.Fatalf("tab 1 sees title %q after tab 2's edit", got.Title)
	}
	m := mustAdd(t, tab2, "from tab 2", "")
	if m.ID != 2 {
		t.Fatalf("second note of the user got id %d, want 2", m.ID)
	}
	if page, _ := mustList(t, tab1, 0, 0); !sameIDs(ids(page), 2, 1) {
		t.Fatalf("tab 1 lists %v, want [2 1]", ids(page))
	}
	if err := remove(tab1, 2); err != nil {
		t.Fatal(err)
	}
	if c, _ := stats(t, tab2); c != 1 {
		t.Fatalf("tab 2 counts %d notes, want 1", c)
	}
}

func TestUsersNeverSeeEachOthersNotes(t *testing.T) {
	e := newEnv(t, 64<<20)
	g := e.gadget()
	alice := open(t, g, "alice", schema.Role_owner)
	bob := open(t, g, "bob", schema.Role_owner)

	a1 := mustAdd(t, alice, "alice's secret", "the password is swordfish")
	a2 := mustAdd(t, alice, "alice's other note", "")

	// Bob sees nothing of alice's, even when he guesses her ids.
	if page, next := mustList(t, bob, 0, 0); len(page) != 0 || next != 0 {
		t.Fatalf("bob lists %v", page)
	}
	if page, _ := mustList(t, bob, 0, a2.ID+1); len(page) != 0 {
		t.Fatalf("bob lists %v after alice's newest id", page)
	}
	if got := mustSearch(t, bob, "swordfish"); len(got) != 0 {
		t.Fatalf("bob's search finds %v", got)
	}
	if c, b := stats(t, bob); c != 0 || b != 0 {
		t.Fatalf("bob's stats = %d, %d", c, b)
	}
	for _, id := range []uint32{a1.ID, a2.ID} {
		_, err := get(t, bob, id)
		wantErr(t, "bob gets alice's note", err, fmt.Sprintf("notes: no note %d", id))
		_, err = update(t, bob, id, "mine now", "")
		wantErr(t, "bob updates alice's note", err, fmt.Sprintf("notes: no note %d", id))
		wantErr(t, "bob removes alice's note", remove(bob, id), fmt.Sprintf("notes: no note %d", id))
	}

	// Bob's own notes have their own ids, which collide with alice's; each
	// still sees only their own.
	b1 := mustAdd(t, bob, "bob's note", "swordfish is a fish")
	if b1.ID != 1 {
		t.Fatalf("bob's first note got id %d, want 1", b1.ID)
	}
	if got, _ := get(t, alice, 1); got != a1 {
		t.Fatalf("alice's note 1 is now %+v, want %+v", got, a1)
	}
	if got, _ := get(t, bob, 1); got != b1 {
		t.Fatalf("bob's note 1 is %+v, want %+v", got, b1)
	}
	if got := mustSearch(t, alice, "swordfish"); !sameIDs(got, 1) {
		t.Fatalf("alice's search = %v, want only her own note 1", got)
	}
	if page, _ := mustList(t, alice, 0, 0); !sameIDs(ids(page), 2, 1) || page[1] != a1 {
		t.Fatalf("alice lists %+v", page)
	}

	// Every key bob's session wrote is under bob's prefix.
	for k := range e.host.Committed() {
		if !strings.HasPrefix(k, "u/alice/") && !strings.HasPrefix(k, "u/bob/") {
			t.Fatalf("unexpected key %q", k)
		}
	}
}

func TestUserIDsThatLookLikeKeyPathsDoNotAlias(t *testing.T) {
	e := newEnv(t, 64<<20)
	g := e.gadget()
	a := open(t, g, "a", schema.Role_owner)
	// Without escaping, this user's notes would live under "u/a/n/...",
	// inside user "a"'s note prefix.
	evil := open(t, g, "a/n/ffffffff", schema.Role_owner)
	mustAdd(t, evil, "planted", "")
	if page, _ := mustList(t, a, 0, 0); len(page) != 0 {
		t.Fatalf(`user "a" lists %+v`, page)
	}
	mustAdd(t, a, "a's own", "")
	if page, _ := mustList(t, evil, 0, 0); len(page) != 1 || page[0].Title != "planted" {
		t.Fatalf("the other user lists %+v", page)
	}

	_, err := tryOpen(g, "", schema.Role_owner)
	wantErr(t, "open without a user id", err, "notes: the caller has no user id")
	_, err = tryOpen(g, strings.Repeat("/", 100), schema.Role_owner)
	wantErr(t, "open with a huge user id", err, "notes: user id is too long")
}

func TestViewerCanReadButNotWrite(t *testing.T) {
	e := newEnv(t, 64<<20)
	g := e.gadget()
	owner := open(t, g, "carol", schema.Role_owner)
	n := mustAdd(t, owner, "written as owner", "findable")

	// Carol's share was later reduced to viewer.
	viewer := open(t, g, "carol", schema.Role_viewer)
	if got, err := get(t, viewer, n.ID); err != nil || got != n {
		t.Fatalf("viewer get = %+v, %v", got, err)
	}
	if page, _ := mustList(t, viewer, 0, 0); !sameIDs(ids(page), n.ID) {
		t.Fatalf("viewer lists %v", ids(page))
	}
	if got := mustSearch(t, viewer, "FINDABLE"); !sameIDs(got, n.ID) {
		t.Fatalf("viewer search = %v", got)
	}
	if c, _ := stats(t, viewer); c != 1 {
		t.Fatalf("viewer stats count = %d", c)
	}

	const denied = "notes: permission denied: viewers can read notes but not add, change or remove them"
	_, err := add(t, viewer, "nope", "")
	wantErr(t, "viewer add", err, denied)
	_, err = update(t, viewer, n.ID, "nope", "")
	wantErr(t, "viewer update", err, denied)
	wantErr(t, "viewer remove", remove(viewer, n.ID), denied)
	if got, _ := get(t, owner, n.ID); got != n {
		t.Fatalf("note changed to %+v after the viewer's attempts", got)
	}

	f, release := viewer.Info(ctx, nil)
	defer release()
	info, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	name, _ := info.UserName()
	if info.CanWrite() || name != "name of carol" || info.MaxNotes() != 10000 || info.MaxTitleBytes() != 200 || info.MaxBodyBytes() != 65536 {
		t.Fatalf("viewer info = %v", info)
	}
	f2, release2 := owner.Info(ctx, nil)
	defer release2()
	if info, err := f2.Struct(); err != nil || !info.CanWrite() {
		t.Fatalf("owner info = %v, %v; want canWrite", info, err)
	}
}

func TestValidation(t *testing.T) {
	e := newEnv(t, 64<<20)
	s := open(t, e.gadget(), "dave", schema.Role_editor)

	for _, tc := range []struct {
		name, title, body, want string
	}{
		{"empty title", "", "body", "notes: title is empty"},
		{"blank title", " \t\n", "body", "notes: title is empty"},
		{"long title", strings.Repeat("t", 201), "", "notes: title is 201 bytes, at most 200"},
		{"long body", "t", strings.Repeat("b", 64<<10+1), "notes: body is 65537 bytes, at most 65536 (64 KiB)"},
		{"bad utf-8 title", "t\xff", "", "notes: title is not valid UTF-8"},
		{"bad utf-8 body", "t", "b\xffb", "notes: body is not valid UTF-8"},
	} {
		_, err := add(t, s, tc.title, tc.body)
		wantErr(t, "add with "+tc.name, err, tc.want)
	}
	if c, _ := stats(t, s); c != 0 {
		t.Fatalf("%d notes after only invalid adds", c)
	}

	// The limits themselves are allowed.
	big := mustAdd(t, s, strings.Repeat("é", 100), strings.Repeat("b", 64<<10))
	if big.ID != 1 || len(big.Title) != 200 || len(big.Body) != 64<<10 {
		t.Fatalf("add at the limits returned id %d, %d-byte title, %d-byte body", big.ID, len(big.Title), len(big.Body))
	}
	mustAdd(t, s, "t", "")

	// Update validates the same way and changes nothing when it refuses.
	_, err := update(t, s, big.ID, "", "x")
	wantErr(t, "update with an empty title", err, "notes: title is empty")
	_, err = update(t, s, big.ID, "t", strings.Repeat("b", 64<<10+1))
	wantErr(t, "update with a long body", err, "notes: body is 65537 bytes")
	if got, _ := get(t, s, big.ID); got != big {
		t.Fatal("a refused update changed the note")
	}

	_, err = get(t, s, 0)
	wantErr(t, "get(0)", err, "notes: no note 0")
	_, _, err = list(t, s, 201, 0)
	wantErr(t, "list(limit 201)", err, "notes: limit 201 is too large; at most 200")
	_, _, err = search(t, s, "", 0, 0)
	wantErr(t, "empty search", err, "notes: search query is empty")
	_, _, err = search(t, s, strings.Repeat("q", 201), 0, 0)
	wantErr(t, "long search", err, "notes: search query is 201 bytes, at most 200")
}

// seed writes n notes for userID straight into the host's storage, in the
// layout main.go documents, as if the gadget had added them.
func seed(t *testing.T, h *memhost.Host, userID string, n int) {
	t.Helper()
	prefix := "u/" + url.PathEscape(userID) + "/"
	var bytes uint64
	for id := uint32(1); id <= uint32(n); id++ {
		msg, seg, err := capnp.NewMessage(capnp.SingleSegment(nil))
		if err != nil {
			t.Fatal(err)
		}
		root, err := notespb.NewRootNote(seg)
		if err != nil {
			t.Fatal(err)
		}
		root.SetId(id)
		root.SetCreatedAt(int64(id))
		root.SetUpdatedAt(int64(id))
		if err := root.SetTitle(fmt.Sprint("seeded ", id)); err != nil {
			t.Fatal(err)
		}
		b, err := msg.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("%sn/%08x", prefix, ^id)
		if err := h.Put(key, b); err != nil {
			t.Fatal(err)
		}
		bytes += uint64(len(key) + len(b))
	}
	meta := binary.BigEndian.AppendUint32(nil, uint32(n)) // lastID
	meta = binary.BigEndian.AppendUint32(meta, uint32(n)) // count
	meta = binary.BigEndian.AppendUint64(meta, bytes)
	if err := h.Put(prefix+"meta", meta); err != nil {
		t.Fatal(err)
	}
}

func TestStorageLayoutIsAsDocumented(t *testing.T) {
	e := newEnv(t, 64<<20)
	s := open(t, e.gadget(), "jo", schema.Role_owner)
	n := mustAdd(t, s, "hello", "world")
	mustAdd(t, s, "second", "")
	b, ok := e.host.Get("u/jo/n/fffffffe") // ^uint32(1)
	if !ok {
		t.Fatalf("note 1 is not at u/jo/n/fffffffe; keys: %v", keysOf(e.host.Committed()))
	}
	msg, err := capnp.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	root, err := notespb.ReadRootNote(msg)
	if err != nil {
		t.Fatal(err)
	}
	if got := decode(t, root); got != n {
		t.Fatalf("stored note 1 = %+v, want %+v", got, n)
	}
	meta, ok := e.host.Get("u/jo/meta")
	if !ok || len(meta) != 16 || binary.BigEndian.Uint32(meta[0:]) != 2 || binary.BigEndian.Uint32(meta[4:]) != 2 ||
		binary.BigEndian.Uint64(meta[8:]) != userBytes(e.host, "jo") {
		t.Fatalf("u/jo/meta = %x", meta)
	}
	if keys := keysOf(e.host.Committed()); len(keys) != 3 {
		t.Fatalf("keys = %v, want two notes and meta", keys)
	}

	// Seeded data in the same layout is read back as the gadget's own.
	seed(t, e.host, "kim", 3)
	k := open(t, e.gadget(), "kim", schema.Role_owner)
	if page, _ := mustList(t, k, 0, 0); !sameIDs(ids(page), 3, 2, 1) || page[0].Title != "seeded 3" {
		t.Fatalf("seeded notes list as %+v", page)
	}
}

func keysOf(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// size is what the data m takes: keys plus values, in bytes.
func size(m map[string][]byte) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}

func TestPerUserNoteCap(t *testing.T) {
	e := newEnv(t, 64<<20)
	seed(t, e.host, "erin", 9_999)
	g := e.gadget()
	s := open(t, g, "erin", schema.Role_owner)
	if n := mustAdd(t, s, "number 10000", ""); n.ID != 10_000 {
		t.Fatalf("10,000th note got id %d", n.ID)
	}
	_, err := add(t, s, "one too many", "")
	wantErr(t, "add #10001", err, "notes: you already have 10000 notes, the most one user may keep; remove some first")
	if c, _ := stats(t, s); c != 10_000 {
		t.Fatalf("count = %d after a refused add", c)
	}
	// The cap is per user.
	mustAdd(t, open(t, g, "frank", schema.Role_owner), "frank's first", "")
	// Removing one makes room again.
	if err := remove(s, 5000); err != nil {
		t.Fatal(err)
	}
	if n := mustAdd(t, s, "room again", ""); n.ID != 10_001 {
		t.Fatalf("got id %d, want 10001", n.ID)
	}
	var all []note
	for after := uint32(0); ; {
		page, next := mustList(t, s, 200, after)
		all = append(all, page...)
		if next == 0 {
			break
		}
		after = next
	}
	if len(all) != 10_000 || all[0].ID != 10_001 || all[len(all)-1].ID != 1 {
		t.Fatalf("listing all gives %d notes", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID >= all[i-1].ID {
			t.Fatalf("list is not newest first at %d: %d then %d", i, all[i-1].ID, all[i].ID)
		}
	}
	// A search for something rare reads every note and still answers.
	if got := mustSearch(t, s, "ROOM AGAIN"); !sameIDs(got, 10_001) {
		t.Fatalf("search over 10,000 notes = %v", got)
	}
}

func TestStorageLimitReachesTheCallerAndChangesNothing(t *testing.T) {
	const limit = 16 << 10
	e := newEnv(t, limit)
	s := open(t, e.gadget(), "gina", schema.Role_owner)
	body := strings.Repeat("x", 3000)
	var added int
	var err error
	for i := 0; i < 10; i++ {
		if _, err = add(t, s, fmt.Sprint("note ", i), body); err != nil {
			break
		}
		added++
	}
	if added == 0 || added == 10 {
		t.Fatalf("added %d notes of 3 KB under a 16 KiB limit", added)
	}
	wantErr(t, "add past the storage limit", err,
		"notes: storage limit reached, nothing was saved",
		"over the limit of 16384 bytes")

	// The failed add left nothing behind: counts, bytes and storage agree.
	beforeData := e.host.Committed()
	count, bytes := stats(t, s)
	if int(count) != added || bytes != userBytes(e.host, "gina") || len(listAll(t, s)) != added {
		t.Fatalf("after the failure: stats %d notes %d bytes, storage %d bytes, want %d notes", count, bytes, userBytes(e.host, "gina"), added)
	}
	if size(beforeData) > limit {
		t.Fatalf("storage holds %d bytes, over the limit", size(beforeData))
	}

	// Growing a note past the limit fails the same way and keeps the old one.
	_, err = update(t, s, 1, "note 0", strings.Repeat("y", 10000))
	wantErr(t, "update past the storage limit", err, "notes: storage limit reached, nothing was saved")
	if got, _ := get(t, s, 1); got.Body != body {
		t.Fatal("a failed update changed the note")
	}

	// Removing a note makes room.
	if err := remove(s, 1); err != nil {
		t.Fatal(err)
	}
	if n, err := add(t, s, "fits again", body); err != nil || n.ID != uint32(added)+1 {
		t.Fatalf("add after making room = %+v, %v", n, err)
	}
}

// TestFailedAddLeavesNothingBehind fills storage so that add's first write
// (the note) fits and its second (the per-user record) does not: the call
// fails, and the host's transaction takes the note back with it.
func TestFailedAddLeavesNothingBehind(t *testing.T) {
	msg, seg, _ := capnp.NewMessage(capnp.SingleSegment(nil))
	root, _ := notespb.NewRootNote(seg)
	root.SetTitle("t")
	root.SetBody("b")
	val, err := msg.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	noteSize := len("u/x/n/fffffffe") + len(val)
	metaSize := len("u/x/meta") + 16
	e := newEnv(t, noteSize+metaSize-1)
	s := open(t, e.gadget(), "x", schema.Role_owner)
	_, err = add(t, s, "t", "b")
	wantErr(t, "add whose second write is over the limit", err, "notes: storage limit reached, nothing was saved")
	if keys := keysOf(e.host.Committed()); len(keys) != 0 {
		t.Fatalf("a failed add left %v in storage", keys)
	}
	if c, b := stats(t, s); c != 0 || b != 0 {
		t.Fatalf("stats after a failed add = %d, %d", c, b)
	}
}

func TestPagesStayUnderTheFrameLimit(t *testing.T) {
	e := newEnv(t, 64<<20)
	s := open(t, e.gadget(), "hank", schema.Role_owner)
	body := strings.Repeat("z", 64<<10)
	for i := 0; i < 70; i++ { // 70 × 64 KiB = 4.4 MiB, past one page's 4 MiB budget
		mustAdd(t, s, fmt.Sprint("big ", i), body)
	}
	page, next := mustList(t, s, 200, 0)
	if len(page) == 0 || len(page) >= 70 || next != page[len(page)-1].ID {
		t.Fatalf("first page has %d notes, next %d", len(page), next)
	}
	rest, next2 := mustList(t, s, 200, next)
	if len(page)+len(rest) != 70 || next2 != 0 {
		t.Fatalf("pages of %d and %d notes (next %d), want 70 in all", len(page), len(rest), next2)
	}
	found, next, err := search(t, s, "ZZZ", 200, 0)
	if err != nil || len(found) == 0 || len(found) >= 70 || next == 0 {
		t.Fatalf("search found %d, next %d, %v", len(found), next, err)
	}
}

func TestNotesSurviveInstanceRestart(t *testing.T) {
	e := newEnv(t, 64<<20)
	g1 := e.gadget()
	s1 := open(t, g1, "ivy", schema.Role_owner)
	mustAdd(t, s1, "one", "first")
	mustAdd(t, s1, "two", "second")
	if err := remove(s1, 1); err != nil {
		t.Fatal(err)
	}
	count1, bytes1 := stats(t, s1)
	g1.Close()
	if _, err := get(t, s1, 2); err == nil {
		t.Fatal("a session of a closed gadget still works")
	}

	g2 := e.gadget()
	s2 := open(t, g2, "ivy", schema.Role_owner)
	page, _ := mustList(t, s2, 0, 0)
	if len(page) != 1 || page[0].ID != 2 || page[0].Title != "two" || page[0].Body != "second" {
		t.Fatalf("after restart ivy lists %+v", page)
	}
	if c, b := stats(t, s2); c != count1 || b != bytes1 {
		t.Fatalf("after restart stats = %d, %d; want %d, %d", c, b, count1, bytes1)
	}
	// The id sequence survived too: no id is handed out twice.
	if n := mustAdd(t, s2, "three", ""); n.ID != 3 {
		t.Fatalf("first note after restart got id %d, want 3", n.ID)
	}
}

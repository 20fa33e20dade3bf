package server

import (
	"context"
	"net"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// budgetUser is a user logged in over a real connection, with versions of
// the hostile guest installed as their own blueprint "mine".
type budgetUser struct {
	t  *testing.T
	s  *Server
	id string
	ws schema.Workspace
}

func newBudgetUser(t *testing.T, s *Server, addr, name string, wasm []byte, versions ...string) *budgetUser {
	t.Helper()
	ctx := context.Background()
	token, err := s.IssueToken(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.store.UserByName(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	// The first version is installed (compiled); the others, the same
	// bytes, are stored as they are, to be compiled from the compilation
	// cache on first use: each is a module of its own all the same.
	for i, v := range versions {
		bp := store.BlueprintRecord{Owner: u.ID, Name: "mine", Version: v, SessionInterface: schema.Storage_TypeID,
			Wasm: wasm, SchemaNodes: blueprinttest.Schema(t, "schema", "gadget.capnp")}
		if i == 0 {
			_, err = s.install(ctx, bp, false)
		} else {
			_, err = s.putBlueprint(ctx, bp, false)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	conn, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ws, release := conn.Login(ctx, token)
	t.Cleanup(release)
	return &budgetUser{t: t, s: s, id: u.ID, ws: ws}
}

// gadget creates a gadget of the user's blueprint version v.
func (u *budgetUser) gadget(v string) schema.Gadget {
	u.t.Helper()
	g := store.GadgetRecord{ID: store.NewID(), Name: "mine", OwnerID: u.id, BlueprintOwner: u.id, BlueprintName: "mine",
		BlueprintVersion: v, SessionInterface: schema.Storage_TypeID, CreatedAt: time.Now()}
	if err := u.s.store.CreateGadget(context.Background(), g); err != nil {
		u.t.Fatal(err)
	}
	return gadgetByID(u.t, u.ws, g.ID)
}

// use opens a session of g and calls it; the session stays held until
// release.
func (u *budgetUser) use(g schema.Gadget) (release func(), err error) {
	u.t.Helper()
	f, rel := g.Open(context.Background(), nil)
	defer rel()
	res, err := f.Struct()
	if err != nil {
		return nil, err
	}
	session := res.Session().AddRef()
	if err := hostileCommand(u.t, session, "ok"); err != nil {
		session.Release()
		return nil, err
	}
	return session.Release, nil
}

func (u *budgetUser) mustUse(g schema.Gadget) func() {
	u.t.Helper()
	release, err := u.use(g)
	if err != nil {
		u.t.Fatal(err)
	}
	return release
}

func budgetServer(t *testing.T, perUser, total func(cost int64) int64) (s *Server, addr string, wasm []byte) {
	t.Helper()
	wasm = blueprinttest.Wasm(t, "wasmhost/internal/testguests/hostile")
	cost := moduleCost("someone", len(wasm))
	s = openTestServer(t,
		WithModuleMemory(perUser(cost), total(cost)),
		WithWasmOptions(wasmhost.WithIdleTimeout(50*time.Millisecond)),
		WithIdleShellTimeout(50*time.Millisecond))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.ServeCapnp(ln)
	return s, ln.Addr().String(), wasm
}

// Before, every version a user's live gadgets used stayed compiled in memory
// without bound: an outside tester held ~146 MB of server memory per version
// of a 22 MB module, 100 versions a user.
func TestAUsersLiveGadgetsHoldABoundedAmountOfCompiledCode(t *testing.T) {
	// Room for two of alice's versions, not three.
	s, addr, wasm := budgetServer(t,
		func(cost int64) int64 { return 2*cost + cost/2 },
		func(cost int64) int64 { return 100 * cost })
	alice := newBudgetUser(t, s, addr, "alice", wasm, "1", "2", "3")
	bob := newBudgetUser(t, s, addr, "bob", wasm, "1")

	// Gadgets of one version count it once.
	var held []func()
	for _, v := range []string{"1", "1", "2"} {
		held = append(held, alice.mustUse(alice.gadget(v)))
	}
	third := alice.gadget("3")
	_, err := alice.use(third)
	requireContains(t, err, "your gadgets would hold")
	requireContains(t, err, "of compiled blueprint code in memory, the limit is")
	if exc.TypeOf(err) != exc.Overloaded {
		t.Fatalf("refusal is not an overloaded exception: %v", err)
	}

	// Another user is served meanwhile.
	defer bob.mustUse(bob.gadget("1"))()

	// Alice's sessions released, her gadgets are let go and her third
	// version starts.
	for _, release := range held {
		release()
	}
	eventually(t, "alice's version starts once her sessions are released", func() bool {
		release, err := alice.use(third)
		if err == nil {
			release()
		}
		return err == nil
	})
}

// The total counts every user's loaded modules; idle ones are freed to make
// room before anyone is refused.
func TestCompiledCodeOfAllUsersIsBoundedAndIdleModulesAreFreedFirst(t *testing.T) {
	// Room for two modules in all.
	s, addr, wasm := budgetServer(t,
		func(cost int64) int64 { return 100 * cost },
		func(cost int64) int64 { return 2*cost + cost/2 })
	alice := newBudgetUser(t, s, addr, "alice", wasm, "1", "2")
	bob := newBudgetUser(t, s, addr, "bob", wasm, "1")

	releaseA1 := alice.mustUse(alice.gadget("1"))
	releaseA2 := alice.mustUse(alice.gadget("2"))
	bobs := bob.gadget("1")
	_, err := bob.use(bobs)
	requireContains(t, err, "the server holds")
	requireContains(t, err, "of compiled blueprint code in memory, the limit is")
	if exc.TypeOf(err) != exc.Overloaded {
		t.Fatalf("refusal is not an overloaded exception: %v", err)
	}

	// Alice lets go of one version: its module goes idle, and is freed
	// for bob's.
	releaseA1()
	eventually(t, "alice's first gadget is let go", func() bool { return s.liveShells() == 1 })
	defer bob.mustUse(bobs)()
	releaseA2()
}

package client_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/blueprint/toolchain"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

// startServer runs a throwaway gadgetd with the counter blueprint and returns
// its address and a token. A real program would dial an existing server.
func startServer(ctx context.Context) (addr, token string, stop func()) {
	dir, err := os.MkdirTemp("", "gadgetd-example-")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.Open(ctx, dir)
	if err != nil {
		log.Fatal(err)
	}
	built, err := os.MkdirTemp("", "gadgetd-example-counter-")
	if err != nil {
		log.Fatal(err)
	}
	if err := toolchain.BuildInto(ctx, blueprinttest.RepoRoot()+"/examples/counter", built); err != nil {
		log.Fatal(err)
	}
	b, err := blueprint.Load(built)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := srv.InstallBuiltin(ctx, b); err != nil {
		log.Fatal(err)
	}
	if token, err = srv.IssueToken(ctx, "demo"); err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.ServeCapnp(ln)
	return ln.Addr().String(), token, func() {
		srv.Close(ctx)
		os.RemoveAll(dir)
		os.RemoveAll(built)
	}
}

// Login, create a counter gadget, open a session and increment it: four
// calls, pipelined into one network round trip.
func Example() {
	ctx := context.Background()
	addr, token, stop := startServer(ctx)
	defer stop()

	conn, err := client.Dial(ctx, addr)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	ws, release := conn.Login(ctx, token)
	defer release()
	created, release := ws.Create(ctx, func(p schema.Workspace_create_Params) error {
		return p.SetBlueprint("counter")
	})
	defer release()
	opened, release := created.Gadget().Open(ctx, nil)
	defer release()
	counter := counterpb.Counter(opened.Session())
	incremented, release := counter.Increment(ctx, nil)
	defer release()

	res, err := incremented.Struct() // the only wait
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("counter is now", res.Value())
	// Output: counter is now 1
}

// Save a session, and restore it later over another connection that never
// logs in: the token is the credential, and it acts as the user who saved
// it.
func ExampleSave() {
	ctx := context.Background()
	addr, token, stop := startServer(ctx)
	defer stop()

	conn, err := client.Dial(ctx, addr)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ws, release := conn.Login(ctx, token)
	defer release()
	created, release := ws.Create(ctx, func(p schema.Workspace_create_Params) error {
		return p.SetBlueprint("counter")
	})
	defer release()
	opened, release := created.Gadget().Open(ctx, nil)
	defer release()
	session := opened.Session()
	incremented, release := counterpb.Counter(session).Increment(ctx, nil)
	defer release()
	if _, err := incremented.Struct(); err != nil {
		log.Fatal(err)
	}
	saved, err := client.Save(ctx, session)
	if err != nil {
		log.Fatal(err)
	}

	later, err := client.Dial(ctx, addr)
	if err != nil {
		log.Fatal(err)
	}
	defer later.Close()
	restored, release := later.Restore(ctx, saved)
	defer release()
	again, release := counterpb.Counter(restored).Increment(ctx, nil)
	defer release()
	res, err := again.Struct()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the restored session counts", res.Value())
	// Output: the restored session counts 2
}

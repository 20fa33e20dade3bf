package ledger_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/ledger"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	db, err := bolt.Open(filepath.Join(dir, "gadgetd.db"), 0o600, nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	l, err := ledger.Open(db)
	if err != nil {
		panic(err)
	}

	// The owner binds a gatekeeper to a gadget...
	err = l.Bind(ctx, gatekeepers.Binding{
		GadgetID: "gadget1", OwnerID: "alice", Name: "tracker",
		Service: "github", Kind: "github", Resource: "acme/widgets",
	})
	if err != nil {
		panic(err)
	}

	// ...which makes the real calls of approved actions.
	applied := make(chan string)
	apply := func(ctx context.Context, a gatekeepers.Action) (gatekeepers.Outcome, error) {
		applied <- a.Describe
		return gatekeepers.Outcome{Describe: "created issue #42"}, nil
	}
	cannotTell := func(context.Context, gatekeepers.Action) (bool, gatekeepers.Outcome, bool, error) {
		return false, gatekeepers.Outcome{}, false, nil
	}
	ap := ledger.NewApplier(l, apply, cannotTell)
	if err := ap.Start(ctx); err != nil {
		panic(err)
	}
	defer ap.Close(ctx)

	// The gadget asks for a side effect: it is queued, pending.
	a, err := l.Queue(ctx, gatekeepers.Action{
		GadgetID: "gadget1", Binding: "tracker", Method: "createIssue", UserID: "alice",
		Payload: []byte(`{"title":"Crash on start"}`), Describe: `create issue "Crash on start"`,
	})
	if err != nil {
		panic(err)
	}
	pending, _ := l.Pending(ctx, "gadget1", "tracker")
	fmt.Println(len(pending), "pending")

	// A human approves it, and the Applier makes the real call.
	if _, err := l.Decide(ctx, "alice", []string{a.ID}, true, "alice"); err != nil {
		panic(err)
	}
	fmt.Println("applied:", <-applied)
	ap.Close(ctx) // waits for the outcome to be recorded
	a, _ = l.Action(ctx, "alice", a.ID)
	fmt.Println(a.State == gatekeepers.Applied, a.Outcome.Describe)
	// Output:
	// 1 pending
	// applied: create issue "Crash on start"
	// true created issue #42
}

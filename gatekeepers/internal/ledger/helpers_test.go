package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

func openDB(t *testing.T, path string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// newLedger returns a ledger on a fresh bbolt file, closed at the end of
// the test.
func newLedger(t *testing.T, opts ...Option) *Ledger {
	t.Helper()
	db := openDB(t, filepath.Join(t.TempDir(), "gadgetd.db"))
	t.Cleanup(func() { db.Close() })
	l, err := Open(db, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func bind(t *testing.T, l *Ledger, gadget, owner, name string, autoApprove ...string) {
	t.Helper()
	err := l.Bind(context.Background(), gatekeepers.Binding{
		GadgetID: gadget, OwnerID: owner, Name: name, Service: "svc", Kind: "http",
		Resource: "https://example.com/", CreatedBy: owner, AutoApprove: autoApprove,
	})
	if err != nil {
		t.Fatal(err)
	}
}

func queue(t *testing.T, l *Ledger, gadget, name string) gatekeepers.Action {
	t.Helper()
	a, err := l.Queue(context.Background(), gatekeepers.Action{
		GadgetID: gadget, Binding: name, Method: "post", UserID: "user", Describe: "post something",
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// decide decides ids and fails the test unless every one was decided.
func decide(t *testing.T, l *Ledger, owner string, approve bool, ids ...string) {
	t.Helper()
	ds, err := l.Decide(context.Background(), owner, ids, approve, "owner-user")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Err != nil {
			t.Fatalf("decide %s: %v", d.ID, d.Err)
		}
	}
}

func state(t *testing.T, l *Ledger, owner, id string) gatekeepers.ActionState {
	t.Helper()
	a, err := l.Action(context.Background(), owner, id)
	if err != nil {
		t.Fatal(err)
	}
	return a.State
}

// eventually waits up to 10 s for cond. It proves "it happened", not how
// fast.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// calls records the real calls an Applier makes.
type calls struct {
	mu  sync.Mutex
	ids []string
}

func (c *calls) apply(ctx context.Context, a gatekeepers.Action) (gatekeepers.Outcome, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids = append(c.ids, a.ID)
	return gatekeepers.Outcome{Describe: "done " + a.ID}, nil
}

func (c *calls) made() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...)
}

func cannotTell(context.Context, gatekeepers.Action) (bool, gatekeepers.Outcome, bool, error) {
	return false, gatekeepers.Outcome{}, false, nil
}

// startApplier starts an Applier closed at the end of the test.
func startApplier(t *testing.T, l *Ledger, apply ApplyFunc, reconcile ReconcileFunc, opts ...ApplierOption) *Applier {
	t.Helper()
	ap := NewApplier(l, apply, reconcile, opts...)
	if err := ap.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ap.Close(ctx); err != nil {
			t.Errorf("close applier: %v", err)
		}
	})
	return ap
}

// waitIdle waits until the Applier's workers, all started by kicks of
// commits that already returned, looked at their binding and stopped.
// Nothing else may commit meanwhile.
func (ap *Applier) waitIdle() { ap.workers.Wait() }

func mustErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got error %v, want one wrapping %v", err, want)
	}
}

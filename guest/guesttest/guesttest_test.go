package guesttest_test

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
	"github.com/gadgetd/gadgetd/examples/counter/countertest"
	"github.com/gadgetd/gadgetd/guest/guesttest"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
)

// TestGadgetRunsAndKeepsOnlyItsStorageAcrossARestart drives the counter
// example: calls reach the guest built from source, its writes commit to
// the in-memory storage, and a restarted instance starts from that storage
// alone.
func TestGadgetRunsAndKeepsOnlyItsStorageAcrossARestart(t *testing.T) {
	ctx := context.Background()
	g := guesttest.Start(t, filepath.Join(blueprinttest.RepoRoot(), "examples", "counter"))
	c := counterpb.Counter(g.Open(t, guesttest.Caller{UserID: "u1", UserName: "ann"}))
	for want := int64(1); want <= 2; want++ {
		if v, err := countertest.Increment(ctx, c); err != nil || v != want {
			t.Fatalf("increment = %d, %v; want %d", v, err, want)
		}
	}
	if v, found := g.Stored("value"); !found || binary.BigEndian.Uint64(v) != 2 {
		t.Fatalf("stored value = %x (found %v), want 2", v, found)
	}

	g.Restart(t)
	if _, err := countertest.Get(ctx, c); err == nil {
		t.Error("a session opened before the restart still works")
	}
	c = counterpb.Counter(g.Open(t, guesttest.Caller{UserID: "u1"}))
	if v, err := countertest.Increment(ctx, c); err != nil || v != 3 {
		t.Fatalf("increment after the restart = %d, %v; want 3", v, err)
	}
}

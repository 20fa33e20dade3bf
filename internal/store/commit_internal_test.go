package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/internal/storage"
)

// A member whose context ended after a leader took it into a group, but
// before its writes started, is left out: it applies nothing and says it
// did not start, and the rest of the group commits in one transaction. (A
// commit still queued when its context ends leaves the queue instead; see
// TestAQueuedCommitWhoseContextEndsAppliesNothingAndLeavesItsGroupAlone.
// Which of the two happens is a race a test outside cannot steer, so this one
// hands the group to the leader's code directly.)
func TestAMemberWhoseContextEndedInItsGroupIsLeftOutAndTheRestCommit(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	txID := func() (id int) {
		s.db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
		return id
	}
	before := txID()

	ended, cancel := context.WithCancel(context.Background())
	cancel()
	var group []*pendingCommit
	for i := range 5 {
		ctx := context.Background()
		if i == 2 {
			ctx = ended
		}
		group = append(group, newPendingCommit(ctx, fmt.Sprint("g", i), []storage.Write{{Key: "k", Value: []byte("v")}}, 100))
	}
	s.commits.commitGroup(group)

	for i, p := range group {
		err := <-p.done
		_, found, _ := s.Get(context.Background(), p.gadgetID, "k")
		if i == 2 {
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "storage commit did not start") || found {
				t.Errorf("the member whose context ended: %v, wrote=%v; want that it did not start", err, found)
			}
			continue
		}
		if err != nil || !found {
			t.Errorf("member %d: %v, wrote=%v", i, err, found)
		}
	}
	if got := txID() - before; got != 1 {
		t.Fatalf("%d write transactions committed, want 1", got)
	}
}

package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/internal/storage"
	"github.com/gadgetd/gadgetd/internal/store"
)

// The tests of group commit (commit.go) queue commits behind a real bbolt
// write transaction that another writer of the file holds open, as a user or
// ledger change may: the first Commit leads and waits for bbolt's writer
// lock, and every later one queues for the next group. Each counts the
// write transactions that commit by bbolt's transaction id, which grows by
// one with each.

// holdWriteLock opens a write transaction on s's file, as another writer
// would, and holds it until release is called (once is enough).
func holdWriteLock(t *testing.T, s *store.BoltStore) (release func()) {
	t.Helper()
	held, end, errc := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		errc <- s.DB().Update(func(*bolt.Tx) error {
			close(held)
			<-end
			return nil
		})
	}()
	<-held
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(end)
			if err := <-errc; err != nil {
				t.Errorf("the held write transaction: %v", err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// waitQueued waits until n commits wait for the next group.
func waitQueued(t *testing.T, s *store.BoltStore, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); store.QueuedCommitsForTest(s) != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d commits queued, want %d", store.QueuedCommitsForTest(s), n)
		}
	}
}

// startLeader starts a commit of writes to gadget "first" while s's writer
// lock is held, and waits until it leads: it waits for the lock, and every
// commit after it queues.
func startLeader(t *testing.T, s *store.BoltStore, writes []storage.Write) <-chan error {
	t.Helper()
	errc := commitAsync(context.Background(), s, "first", writes, 1<<30)
	for deadline := time.Now().Add(10 * time.Second); !store.LeadingForTest(s); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first commit never started to lead")
		}
	}
	return errc
}

// lastTxID returns the id of the last write transaction committed to s.
func lastTxID(t *testing.T, s *store.BoltStore) (id int) {
	t.Helper()
	if err := s.DB().View(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// commitAsync runs one Commit of key=value to gadget in a goroutine and
// returns the channel of its answer.
func commitAsync(ctx context.Context, s *store.BoltStore, gadget string, writes []storage.Write, maxSize int64) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- s.Commit(ctx, gadget, writes, maxSize) }()
	return errc
}

// answer waits for the answer on errc, failing the test if none comes
// within 10 s: a commit that would hang.
func answer(t *testing.T, errc <-chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no answer within 10 s")
		return nil
	}
}

func put(key, value string) []storage.Write {
	return []storage.Write{{Key: key, Value: []byte(value)}}
}

func wantValue(t *testing.T, s *store.BoltStore, gadget, key, want string) {
	t.Helper()
	got, found, err := s.Get(context.Background(), gadget, key)
	if err != nil || !found || string(got) != want {
		t.Errorf("%s/%s = %q, found=%v, %v; want %q", gadget, key, got, found, err, want)
	}
}

func wantNoData(t *testing.T, s *store.BoltStore, gadget string) {
	t.Helper()
	entries, _, err := s.List(context.Background(), gadget, "", "", 10, 1<<20)
	size, _ := s.DataSize(context.Background(), gadget)
	if err != nil || len(entries) != 0 || size != 0 {
		t.Errorf("gadget %s has %d entries (%v) and size %d, want none", gadget, len(entries), err, size)
	}
}

func TestCommitsQueuedBehindARunningOneShareOneTransactionAndAreDurable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	s := openStore(t, path)
	before := lastTxID(t, s)

	release := holdWriteLock(t, s)
	first := startLeader(t, s, put("k", "v"))
	const queued = 16
	var answers []<-chan error
	for i := range queued {
		answers = append(answers, commitAsync(ctx, s, fmt.Sprint("g", i), put("k", fmt.Sprint("v", i)), 100))
	}
	waitQueued(t, s, queued)
	release()
	for i, errc := range append(answers, first) {
		if err := answer(t, errc); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	// The other writer's transaction, the leader's group of one, and one
	// group of the 16 that queued: 3. A transaction each would be 18.
	if got := lastTxID(t, s) - before; got != 3 {
		t.Fatalf("%d write transactions committed, want 3: the 16 queued commits did not share one", got)
	}

	s.Close()
	s = openStore(t, path)
	wantValue(t, s, "first", "k", "v")
	for i := range queued {
		wantValue(t, s, fmt.Sprint("g", i), "k", fmt.Sprint("v", i))
	}
}

// A member that fails fails alone: one over its quota is left out before it
// writes; one that bbolt refuses after it began to write (an empty key,
// which storage.Data never sends but the Store does not check) rolls the
// transaction back, and the group runs again without it. Either way the
// others commit, in one transaction.
func TestAFailingMemberOfAGroupAppliesNothingAndTheOthersCommit(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	if err := s.Commit(ctx, "full", put("old", "12345"), 100); err != nil {
		t.Fatal(err)
	}
	before := lastTxID(t, s)

	release := holdWriteLock(t, s)
	first := startLeader(t, s, put("k", "v"))
	good := map[string]<-chan error{}
	for i := range 3 {
		good[fmt.Sprint("a", i)] = commitAsync(ctx, s, fmt.Sprint("a", i), put("k", "v"), 100)
	}
	overQuota := commitAsync(ctx, s, "full", []storage.Write{
		{Key: "new", Value: []byte("fits")},
		{Key: "big", Value: bytes.Repeat([]byte("x"), 100)},
	}, 100)
	refused := commitAsync(ctx, s, "refused", []storage.Write{
		{Key: "first", Value: []byte("written, then rolled back")},
		{Key: "", Value: []byte("bbolt refuses an empty key")},
	}, 100)
	for i := range 3 {
		good[fmt.Sprint("b", i)] = commitAsync(ctx, s, fmt.Sprint("b", i), put("k", "v"), 100)
	}
	waitQueued(t, s, 8)
	release()

	if err := answer(t, first); err != nil {
		t.Fatal(err)
	}
	if err := answer(t, overQuota); !errors.Is(err, storage.ErrQuota) {
		t.Fatalf("the commit over its quota = %v, want ErrQuota", err)
	}
	if err := answer(t, refused); err == nil || errors.Is(err, storage.ErrQuota) {
		t.Fatalf("the commit with an empty key = %v, want bbolt's error", err)
	}
	for g, errc := range good {
		if err := answer(t, errc); err != nil {
			t.Fatalf("gadget %s, in the group with the failures: %v", g, err)
		}
		wantValue(t, s, g, "k", "v")
	}
	if _, found, _ := s.Get(ctx, "full", "new"); found {
		t.Error("the commit over its quota applied its first write")
	}
	if size, _ := s.DataSize(ctx, "full"); size != storage.EntrySize("old", []byte("12345")) {
		t.Errorf("the size of the gadget over its quota changed to %d", size)
	}
	wantNoData(t, s, "refused")
	// The other writer's, the leader's, and one for the group of 8: the
	// group's rolled-back run committed nothing.
	if got := lastTxID(t, s) - before; got != 3 {
		t.Fatalf("%d write transactions committed, want 3", got)
	}
}

func TestAQueuedCommitWhoseContextEndsAppliesNothingAndLeavesItsGroupAlone(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	before := lastTxID(t, s)

	release := holdWriteLock(t, s)
	first := startLeader(t, s, put("k", "v"))
	var others []<-chan error
	for i := range 4 {
		others = append(others, commitAsync(ctx, s, fmt.Sprint("g", i), put("k", "v"), 100))
	}
	gone, cancel := context.WithCancel(ctx)
	leaving := commitAsync(gone, s, "gone", put("k", "v"), 100)
	waitQueued(t, s, 5)
	cancel()
	err := answer(t, leaving)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "storage commit did not start") {
		t.Fatalf("the cancelled commit = %v, want that it did not start", err)
	}
	waitQueued(t, s, 4) // it left the queue
	release()
	for i, errc := range append(others, first) {
		if err := answer(t, errc); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	for i := range 4 {
		wantValue(t, s, fmt.Sprint("g", i), "k", "v")
	}
	wantNoData(t, s, "gone")
	if got := lastTxID(t, s) - before; got != 3 {
		t.Fatalf("%d write transactions committed, want 3", got)
	}
}

// A commit that finds no group running runs its own at once: it does not
// wait for a second commit to share it with. (A lone writer's latency is
// what BenchmarkCommitOneWriter measures; a test cannot assert it.)
func TestALoneCommitRunsAtOnceWithoutWaitingForCompany(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	before := lastTxID(t, s)
	// answer fails the test if the commit waits 10 s for company.
	if err := answer(t, commitAsync(context.Background(), s, "g", put("k", "v"), 100)); err != nil {
		t.Fatal(err)
	}
	if got := lastTxID(t, s) - before; got != 1 {
		t.Fatalf("%d write transactions committed, want 1", got)
	}
	wantValue(t, s, "g", "k", "v")
}

func TestAGroupIsBoundedInCommitsAndBytes(t *testing.T) {
	big := bytes.Repeat([]byte("x"), store.MaxGroupBytesForTest/2)
	for _, tc := range []struct {
		name   string
		writes []storage.Write
		n      int
		groups int // the transactions the n queued commits take
	}{
		{"commits", put("k", "v"), store.MaxGroupCommitsForTest + 1, 2},
		// Two halves and their keys are over the byte bound: a group each.
		{"bytes", []storage.Write{{Key: "k", Value: big}}, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, filepath.Join(t.TempDir(), "db"))
			before := lastTxID(t, s)
			release := holdWriteLock(t, s)
			first := startLeader(t, s, put("k", "v"))
			var answers []<-chan error
			for i := range tc.n {
				answers = append(answers, commitAsync(ctx, s, fmt.Sprint("g", i), tc.writes, 1<<30))
			}
			waitQueued(t, s, tc.n)
			release()
			for i, errc := range append(answers, first) {
				if err := answer(t, errc); err != nil {
					t.Fatalf("commit %d: %v", i, err)
				}
			}
			if got, want := lastTxID(t, s)-before, 2+tc.groups; got != want {
				t.Fatalf("%d write transactions committed, want %d: the other writer's, the leader's and %d groups", got, want, tc.groups)
			}
		})
	}
}

// TestASmallCommitQueuedBehindLargeOnesGoesInTheNextTransaction: one
// user's large commits cannot make another's small one wait for all of
// them. Queued behind three commits each over the byte bound, a small one
// joins the first of their transactions: three groups, not four.
func TestASmallCommitQueuedBehindLargeOnesGoesInTheNextTransaction(t *testing.T) {
	ctx := context.Background()
	huge := []storage.Write{{Key: "k", Value: bytes.Repeat([]byte("x"), store.MaxGroupBytesForTest+1)}}
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	before := lastTxID(t, s)
	release := holdWriteLock(t, s)
	first := startLeader(t, s, put("k", "v"))
	var answers []<-chan error
	for i := range 3 {
		answers = append(answers, commitAsync(ctx, s, fmt.Sprint("large", i), huge, 1<<30))
	}
	waitQueued(t, s, 3)
	answers = append(answers, commitAsync(ctx, s, "small", put("k", "v"), 1<<30))
	waitQueued(t, s, 4)
	release()
	for i, errc := range append(answers, first) {
		if err := answer(t, errc); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	if got, want := lastTxID(t, s)-before, 2+3; got != want {
		t.Fatalf("%d write transactions committed, want %d: the other writer's, the leader's and 3 groups, the small commit in the first", got, want)
	}
	wantValue(t, s, "small", "k", "v")
}

// The store owns no goroutine for its groups, so Close has none to stop;
// commits queued when it closes are still each answered: committed, or
// failed with bbolt's ErrDatabaseNotOpen, never left waiting.
func TestCommitsQueuedWhenTheStoreClosesAreAnsweredAndNoneIsLost(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	s := openStore(t, path)
	release := holdWriteLock(t, s)
	first := startLeader(t, s, put("k", "v"))
	var answers []<-chan error
	for i := range 8 {
		answers = append(answers, commitAsync(ctx, s, fmt.Sprint("g", i), put("k", "v"), 100))
	}
	waitQueued(t, s, 8)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }() // waits for the held transaction
	release()
	if err := answer(t, closed); err != nil {
		t.Fatal(err)
	}
	if err := answer(t, first); err != nil && !errors.Is(err, bolt.ErrDatabaseNotOpen) {
		t.Fatalf("the leader: %v", err)
	}
	var committed []string
	for i, errc := range answers {
		switch err := answer(t, errc); {
		case err == nil:
			committed = append(committed, fmt.Sprint("g", i))
		case !errors.Is(err, bolt.ErrDatabaseNotOpen):
			t.Fatalf("commit %d: %v, want success or ErrDatabaseNotOpen", i, err)
		}
	}
	if err := answer(t, commitAsync(ctx, s, "late", put("k", "v"), 100)); !errors.Is(err, bolt.ErrDatabaseNotOpen) {
		t.Fatalf("a commit after Close = %v, want ErrDatabaseNotOpen", err)
	}
	s = openStore(t, path)
	for _, g := range committed {
		wantValue(t, s, g, "k", "v")
	}
}

package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// acquireAsync starts an acquire and returns what it will return.
func acquireAsync(ctx context.Context, q *installQueue, owner string) <-chan func() {
	got := make(chan func(), 1)
	go func() {
		release, err := q.acquire(ctx, owner)
		if err != nil {
			release = nil
		}
		got <- release
	}()
	return got
}

// waitUntilWaiting returns once n installs wait in q.
func waitUntilWaiting(t *testing.T, q *installQueue, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		q.mu.Lock()
		l := q.waiting.Len()
		q.mu.Unlock()
		if l == n {
			return
		}
		if l > n || time.Now().After(deadline) {
			t.Fatalf("%d installs wait, want %d", l, n)
		}
	}
}

// mustAcquire acquires a slot that must be free now (10 s is a generous
// "now" on a busy machine).
func mustAcquire(t *testing.T, q *installQueue, owner string) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	release, err := q.acquire(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	return release
}

func TestInstallQueueGivesEachUserAtMostTheirShareInArrivalOrder(t *testing.T) {
	q := newInstallQueue(installLimits{concurrent: 2, perUser: 1})
	ctx := context.Background()
	releaseA1 := mustAcquire(t, q, "alice")
	a2 := acquireAsync(ctx, q, "alice")
	waitUntilWaiting(t, q, 1)
	a3 := acquireAsync(ctx, q, "alice")
	waitUntilWaiting(t, q, 2)
	// Alice's queued installs do not hold bob back: the second slot is his.
	releaseB1 := mustAcquire(t, q, "bob")
	b2 := acquireAsync(ctx, q, "bob")
	waitUntilWaiting(t, q, 3)

	// Bob's slot frees: bob's next takes it, not alice's (over her share),
	// though hers queued first.
	releaseB1()
	releaseB2 := <-b2
	// Alice's slot frees: her oldest waiting install takes it.
	releaseA1()
	releaseA2 := <-a2
	select {
	case <-a3:
		t.Fatal("alice's third install started while her second runs")
	default:
	}
	releaseA2()
	releaseA3 := <-a3
	releaseA3()
	releaseB2()
	if q.running != 0 || len(q.users) != 0 || q.waiting.Len() != 0 {
		t.Fatalf("queue not empty after every release: running %d, users %v, waiting %d", q.running, q.users, q.waiting.Len())
	}
}

func TestInstallWaitingInTheQueueGivesUpWhenItsContextEnds(t *testing.T) {
	q := newInstallQueue(installLimits{concurrent: 1, perUser: 1})
	release := mustAcquire(t, q, "alice")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := q.acquire(ctx, "bob")
		errc <- err
	}()
	waitUntilWaiting(t, q, 1)
	cancel()
	var err error
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("a waiting install went on waiting 10 s after its context ended")
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for a turn to compile") {
		t.Fatalf("a waiting install whose context ended: %v", err)
	}
	release()
	if q.running != 0 || len(q.users) != 0 || q.waiting.Len() != 0 {
		t.Fatalf("queue not empty: running %d, users %v, waiting %d", q.running, q.users, q.waiting.Len())
	}
	mustAcquire(t, q, "bob")()
}

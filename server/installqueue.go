package server

// Design: compiling a blueprint costs up to the compile worker's budget (30 s
// of CPU, 2 GiB by default) and the machine has a few cores, so installs
// take turns. installQueue admits at most `concurrent` compiles at once on
// the server and at most `perUser` of one user's, in arrival order among
// those allowed to start: a user with many installs holds at most perUser
// slots and waits behind their own, while the other slots serve everyone
// else. How many of one user's installs can wait is bounded before they get
// here, by the upload slots they may hold (WithUploadLimits): every install,
// streamed or sent in one message, holds one until it is done.
//
// mu guards everything; a ticket's ready channel is closed, under mu, when
// it is granted a slot. Nothing blocks while holding mu.

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// Defaults for installQueue. Each has an Option (WithInstallLimits,
// WithInstallTimeout).
const (
	DefaultMaxCompiles        = 2
	DefaultMaxCompilesPerUser = 1
	// DefaultInstallTimeout covers an install's wait for its turn and its
	// compile: four times the compile worker's default CPU budget, so that
	// a compile that runs to its budget on a busy machine, at nice 10, still
	// ends at its budget and not at this timeout.
	DefaultInstallTimeout = 2 * time.Minute
)

type installLimits struct {
	concurrent, perUser int
	timeout             time.Duration // for the wait and the compile together
}

type installQueue struct {
	lim installLimits

	mu      sync.Mutex
	running int
	users   map[string]*userInstalls // users with installs running or waiting
	waiting list.List                // of *installTicket, oldest first
}

type userInstalls struct{ running, waiting int }

type installTicket struct {
	owner string
	elem  *list.Element // in waiting; nil once granted
	ready chan struct{} // closed when granted
}

func newInstallQueue(lim installLimits) *installQueue {
	return &installQueue{lim: lim, users: make(map[string]*userInstalls)}
}

// acquire waits for a compile slot for owner ("" for builtins) until ctx
// ends. The caller must call release once its compile is done.
func (q *installQueue) acquire(ctx context.Context, owner string) (release func(), err error) {
	q.mu.Lock()
	u := q.users[owner]
	if u == nil {
		u = &userInstalls{}
		q.users[owner] = u
	}
	t := &installTicket{owner: owner, ready: make(chan struct{})}
	t.elem = q.waiting.PushBack(t)
	u.waiting++
	q.grant()
	q.mu.Unlock()

	release = sync.OnceFunc(func() { q.release(owner) })
	select {
	case <-t.ready:
		return release, nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	granted := t.elem == nil
	if !granted {
		q.waiting.Remove(t.elem)
		u.waiting--
		q.forget(owner)
	}
	q.mu.Unlock()
	if granted {
		release()
	}
	return nil, fmt.Errorf("waiting for a turn to compile: %w", context.Cause(ctx))
}

func (q *installQueue) release(owner string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	q.users[owner].running--
	q.forget(owner)
	q.grant()
}

// grant hands free slots to the oldest waiting tickets whose users are
// under their share. q.mu is held.
func (q *installQueue) grant() {
	for e := q.waiting.Front(); e != nil && q.running < q.lim.concurrent; {
		next := e.Next()
		t := e.Value.(*installTicket)
		if u := q.users[t.owner]; u.running < q.lim.perUser {
			q.waiting.Remove(e)
			t.elem = nil
			u.waiting--
			u.running++
			q.running++
			close(t.ready)
		}
		e = next
	}
}

// forget drops owner's entry once nothing of theirs runs or waits. q.mu is
// held.
func (q *installQueue) forget(owner string) {
	if u := q.users[owner]; u.running == 0 && u.waiting == 0 {
		delete(q.users, owner)
	}
}

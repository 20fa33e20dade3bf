package capserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
)

// heldWatch is a plain counter whose watch waits for hold to close.
type heldWatch struct {
	*plaincounter.Counter
	hold chan struct{}
}

func (c heldWatch) Watch(ctx context.Context, call counterpb.Counter_watch) error {
	call.Go()
	<-c.hold
	return c.Counter.Watch(ctx, call)
}

type silentListener struct{}

func (silentListener) Changed(context.Context, counterpb.Listener_changed) error { return nil }

// go-capnp v3.1.0-alpha.2 left an answer's lock held when a second call
// was pipelined on the same field while the answer was unresolved, and
// that call, and the answer itself, never returned
// (third_party/go-capnp/PATCHES.md). Two calls pipelined on watch's handle
// both answer once watch does.
func TestTwoCallsPipelinedOnOneUnresolvedAnswerBothReturn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := heldWatch{Counter: &plaincounter.Counter{}, hold: make(chan struct{})}
	counter := counterpb.Counter(capserver.New(counterpb.Counter_Methods(nil, c), c, c.Counter))
	listener := counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, silentListener{}), nil, nil))
	// Released only if the calls return: with the lock left held, releasing
	// would hang as well.
	watch, releaseWatch := counter.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(listener) })

	// Both calls are made while watch is held; a call made on the answer's
	// own goroutine would hang the test, so another goroutine makes them.
	issued, answered := make(chan struct{}, 2), make(chan error, 2)
	go func() {
		for range 2 {
			f, release := watch.Handle().Get(ctx, nil)
			issued <- struct{}{}
			go func() {
				_, err := f.Struct()
				release()
				answered <- err
			}()
		}
	}()
	for i := range 2 {
		select {
		case <-issued:
		case <-ctx.Done():
			close(c.hold)
			t.Fatalf("the %s call pipelined on the unresolved answer was never sent", []string{"first", "second"}[i])
		}
	}
	close(c.hold)
	for i := range 2 {
		select {
		case err := <-answered:
			if err != nil {
				t.Fatalf("pipelined call %d: %v", i+1, err)
			}
		case <-ctx.Done():
			t.Fatalf("%d of 2 calls pipelined on one unresolved answer returned", i)
		}
	}
	releaseWatch()
	counter.Release()
}

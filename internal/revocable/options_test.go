package revocable_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/revocable"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
)

type ctxKey struct{}

// seesContext is a counter whose increment fails unless its ctx carries
// ctxKey, which only Around can have put there.
type seesContext struct{ counter }

func (c *seesContext) Increment(ctx context.Context, call counterpb.Counter_increment) error {
	if ctx.Value(ctxKey{}) == nil {
		return errors.New("no value in ctx")
	}
	return c.counter.Increment(ctx, call)
}

// TestAroundRunsEveryCallAndItsContextReachesTheTarget: Around sees each
// call's method before it is forwarded and its outcome after, the context
// it forwards with reaches the target's method, and what it returns is
// the call's outcome; OnShutdown runs when the last reference goes.
func TestAroundRunsEveryCallAndItsContextReachesTheTarget(t *testing.T) {
	ctx := context.Background()
	impl := &seesContext{}
	var seen []string
	shutdown := make(chan struct{})
	wrapped, _ := revocable.NewWith(capserver.New(counterpb.Counter_Methods(nil, impl), impl, nil), revocable.Options{
		Around: func(ctx context.Context, m capnp.Method, forward func(context.Context) error) error {
			if m.MethodID == 1 { // get: refused without reaching the target
				return errors.New("get is refused here")
			}
			err := forward(context.WithValue(ctx, ctxKey{}, true))
			seen = append(seen, m.MethodName+":"+map[bool]string{true: "ok", false: "failed"}[err == nil])
			return err
		},
		OnShutdown: func() { close(shutdown) },
	})
	c := counterpb.Counter(wrapped)
	if v, err := countertest.Increment(ctx, c); err != nil || v != 1 {
		t.Fatalf("increment: %d, %v", v, err)
	}
	f, release := c.Get(ctx, nil)
	_, err := f.Struct()
	release()
	if err == nil || !strings.Contains(err.Error(), "get is refused here") {
		t.Fatalf("get: %v, want Around's refusal", err)
	}
	if len(seen) != 1 || seen[0] != "increment:ok" {
		t.Fatalf("Around saw %v", seen)
	}
	c.Release()
	<-shutdown
}

package wasmhost_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
)

func TestGuestErrorsNameTheMethodOnce(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, counterPkg)
	c := counterpb.Counter(s.open(ctx))
	defer c.Release()
	f, release := c.Watch(ctx, nil) // a null listener: the guest refuses it
	defer release()
	_, err := f.Struct()
	if err == nil || !strings.Contains(err.Error(), "listener is null") {
		t.Fatalf("watch(null): err = %v, want the guest's reason", err)
	}
	if n := strings.Count(err.Error(), "Counter.watch"); n != 1 {
		t.Fatalf("error %q names the method %d times, want once", err, n)
	}
}

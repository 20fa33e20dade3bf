package revocable_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/revocable"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
)

type counter struct{ n int64 }

func (c *counter) Increment(ctx context.Context, call counterpb.Counter_increment) error {
	c.n++
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetValue(c.n)
	return nil
}
func (c *counter) Get(context.Context, counterpb.Counter_get) error         { return nil }
func (c *counter) Watch(context.Context, counterpb.Counter_watch) error     { return nil }
func (c *counter) Present(context.Context, counterpb.Counter_present) error { return nil }
func (c *counter) Keep(context.Context, counterpb.Counter_keep) error       { return nil }
func (c *counter) Kept(context.Context, counterpb.Counter_kept) error       { return nil }

func TestRevokeCutsOffEveryReference(t *testing.T) {
	ctx := context.Background()
	impl := &counter{}
	wrapped, r := revocable.New(capserver.New(counterpb.Counter_Methods(nil, impl), impl, nil))
	a := counterpb.Counter(wrapped)
	b := a.AddRef() // a second holder, as a gadget or another client would be
	defer a.Release()
	defer b.Release()

	if v, err := countertest.Increment(ctx, a); err != nil || v != 1 {
		t.Fatalf("before revoke: %d, %v", v, err)
	}
	r.Revoke(errors.New("binding removed"))
	for name, c := range map[string]counterpb.Counter{"a": a, "b": b} {
		_, err := countertest.Increment(ctx, c)
		if !errors.Is(err, revocable.ErrRevoked) && (err == nil || !strings.Contains(err.Error(), "capability revoked")) {
			t.Fatalf("%s after revoke: err = %v, want ErrRevoked", name, err)
		}
		if !strings.Contains(err.Error(), "binding removed") {
			t.Fatalf("%s after revoke: err = %v, want the reason", name, err)
		}
	}
	if impl.n != 1 {
		t.Fatalf("target saw %d calls, want 1: a call got through after revoke", impl.n)
	}
}

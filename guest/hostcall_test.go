//go:build !wasip1

// The test runs the gadget in the sandbox, from the host.

package guest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/guest/guesttest"
	"github.com/gadgetd/gadgetd/schema"
)

// TestResultsHeldAcrossLaterCallsStayIntact runs, in the sandbox, a gadget
// that holds the results of several calls to the host while it makes
// more, releases one twice, reads a value larger than the buffers the SDK
// keeps, builds one call's params with a call of its own, and sends params
// larger than the SDK's params buffer (internal/heldgadget): every result
// must read what was stored, after all the calls.
func TestResultsHeldAcrossLaterCallsStayIntact(t *testing.T) {
	ctx := context.Background()
	g := guesttest.Start(t, "internal/heldgadget")
	s := schema.Storage(g.Open(t, guesttest.Caller{UserID: "u"}))
	defer s.Release()
	put := func(key, value string) {
		t.Helper()
		_, release, err := s.PutSync(ctx, func(p schema.Storage_put_Params) error {
			if err := p.SetKey(key); err != nil {
				return err
			}
			return p.SetValue([]byte(value))
		})
		release()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"1", "2", "3", "4"} {
		put("a/"+k, "value "+k)
	}
	put("a/big", strings.Repeat("b", 100<<10))
	put("a/ptr", "a/1")

	res, release, err := s.GetSync(ctx, func(p schema.Storage_get_Params) error { return p.SetKey("a") })
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	got, _ := res.Value()
	want := "value 1|value 3|value 4|value 1|big intact: true|echoed: true"
	if string(got) != want {
		t.Errorf("the gadget read\n%s\nwant\n%s", got, want)
	}
}

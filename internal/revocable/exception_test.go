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

// A revoked capability is gone for good: its callers see a disconnected
// exception (capnp.IsDisconnected), with or without a reason, and can tell
// that apart from a call that merely failed.
func TestRevokedCallsFailDisconnected(t *testing.T) {
	for name, reason := range map[string]error{"no reason": nil, "a reason": errors.New("binding removed")} {
		t.Run(name, func(t *testing.T) {
			impl := &counter{}
			wrapped, r := revocable.New(capserver.New(counterpb.Counter_Methods(nil, impl), impl, nil))
			c := counterpb.Counter(wrapped)
			defer c.Release()
			r.Revoke(reason)
			_, err := countertest.Increment(context.Background(), c)
			if !capnp.IsDisconnected(err) || !strings.Contains(err.Error(), "capability revoked") {
				t.Fatalf("call after revoke: err = %v, want a disconnected exception saying it was revoked", err)
			}
		})
	}
}

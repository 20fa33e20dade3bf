// Package countertest drives a counter session (examples/counter) in tests:
// the one place that knows how to read a value out of an answer. Its own test
// is the example's: the counter built, installed in a real server and called
// over TCP. The kernel's tests use internal/testcounter instead.
package countertest

import (
	"context"

	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
)

// Increment adds one and returns the new value.
func Increment(ctx context.Context, c counterpb.Counter) (int64, error) {
	f, release := c.Increment(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return 0, err
	}
	return res.Value(), nil
}

// Get returns the current value.
func Get(ctx context.Context, c counterpb.Counter) (int64, error) {
	f, release := c.Get(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return 0, err
	}
	return res.Value(), nil
}

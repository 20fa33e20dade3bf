package wasmhost

import (
	"errors"

	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/internal/frame"
)

// Errors carry a Cap'n Proto exception type (failed, overloaded,
// disconnected, unimplemented) from wherever they arise to the client: a
// guest's exception frame says its type, host conditions are typed at their
// source (ErrOverloaded, ErrClosed, ErrRestarted), and errors wrapped on the
// way keep the type of the outermost exception in their chain (frame.TypeOf).
// go-capnp, though, reads the type only off the error itself, so errors
// leave for go-capnp through exception.

// exception returns err as an *exc.Exception of the type its chain carries,
// with the same text. nil stays nil.
func exception(err error) error {
	if _, ok := err.(*exc.Exception); ok || err == nil {
		return err
	}
	return &exc.Exception{Type: frame.TypeOf(err), Cause: err}
}

// rootCause is the innermost error of err's chain. go-capnp wraps an error
// once per level of a message it walks, so an error from deep (or cyclic)
// data is kilobytes of "copy struct pointer 0: write pointer: …"; its root
// says what went wrong.
func rootCause(err error) error {
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return err
		}
		err = inner
	}
}

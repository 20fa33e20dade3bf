package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/schema"
)

// An exported capability answers a method its implementation lacks with an
// exception through the normal answer path (capserver's handler), not the
// nil answer go-capnp's own server gives, which a pipelined call turns into
// a panic.
func TestExportAnswersAnUnknownMethodWithAnException(t *testing.T) {
	c := client.Export(schema.Host_Methods(nil, nil), nil)
	defer c.Release()
	ans, release := c.SendCall(context.Background(), capnp.Send{
		Method: capnp.Method{InterfaceID: schema.Host_TypeID, MethodID: 99},
	})
	defer release()
	_, err := ans.Struct()
	if err == nil || !strings.Contains(err.Error(), "method @99 of interface") || !strings.Contains(err.Error(), "is not implemented here") {
		t.Fatalf("unknown method answered %v, want capserver's unimplemented exception", err)
	}
}

// released runs once the last reference to the exported capability is gone,
// and not before: a client learns from it that the server let go (for a
// listener, that its subscription ended).
func TestExportRunsReleasedWhenTheLastReferenceGoes(t *testing.T) {
	released := make(chan struct{})
	c := client.Export(schema.Host_Methods(nil, nil), func() { close(released) })
	other := c.AddRef()
	c.Release()
	select {
	case <-released:
		t.Fatal("released ran while a reference was still held")
	default:
	}
	other.Release()
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("released did not run after the last reference was released")
	}
}

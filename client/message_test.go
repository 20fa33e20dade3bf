package client_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gadgetd/gadgetd/client"
)

func TestMessageDropsEveryCapnpMethodPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"workspace.capnp:Workspace.gadgets: invalid token":                          "invalid token",
		"workspace.capnp:Workspace.create: gadget.capnp:Gadget.open: out of memory": "out of memory",
		"installing: workspace.capnp:BlueprintUpload.done: no such blueprint":       "installing: no such blueprint",
		"compiling x.capnp: x.capnp:12: error: Parse error.":                        "compiling x.capnp: x.capnp:12: error: Parse error.",
		"connecting to gadgetd at 127.0.0.1:1: connection refused":                  "connecting to gadgetd at 127.0.0.1:1: connection refused",
	} {
		if got := client.Message(errors.New(in)); got != want {
			t.Errorf("Message(%q) = %q, want %q", in, got, want)
		}
	}
}

func ExampleMessage() {
	err := errors.New("workspace.capnp:Workspace.gadgets: invalid token")
	fmt.Println(client.Message(err))
	// Output: invalid token
}

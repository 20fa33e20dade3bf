// Command testgadget is the gadget package guesttest's own test runs, with
// no schema of its own: Open writes the caller's id under "opened-by", the
// user name its session context answers under "context-says" and who it
// says is present under "present-says" (name:role, comma-separated), and
// the session it returns is the gadget's storage itself. It calls the host
// through the synchronous stubs (FooSync, guest/callsync).
package main

import (
	"context"
	"strings"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/guest"
	"github.com/gadgetd/gadgetd/schema"
)

func init() { guest.Serve(app{}) }

func main() {}

type app struct{}

func (app) Open(ctx context.Context, call schema.Guest_open) error {
	caller, err := call.Args().Caller()
	if err != nil {
		return err
	}
	id, err := caller.UserId()
	if err != nil {
		return err
	}
	cr, release, err := call.Args().Context().CallerSync(ctx, nil)
	if err != nil {
		return err
	}
	defer release()
	said, err := cr.Caller()
	if err != nil {
		return err
	}
	name, err := said.UserName()
	if err != nil {
		return err
	}
	present, err := presentSays(ctx, call.Args().Context())
	if err != nil {
		return err
	}
	storage := guest.Storage(ctx)
	if err := put(ctx, storage, "opened-by", id); err != nil {
		return err
	}
	if err := put(ctx, storage, "context-says", name); err != nil {
		return err
	}
	if err := put(ctx, storage, "present-says", present); err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetSession(capnp.Client(storage).AddRef())
}

func put(ctx context.Context, storage schema.Storage, key, value string) error {
	_, release, err := storage.PutSync(ctx, func(p schema.Storage_put_Params) error {
		if err := p.SetKey(key); err != nil {
			return err
		}
		return p.SetValue([]byte(value))
	})
	release()
	return err
}

// presentSays lists who sc says is present, as name:role, comma-separated.
func presentSays(ctx context.Context, sc schema.SessionContext) (string, error) {
	res, release, err := sc.PresentSync(ctx, nil)
	if err != nil {
		return "", err
	}
	defer release()
	list, err := res.Present()
	if err != nil {
		return "", err
	}
	var people []string
	for i := range list.Len() {
		name, err := list.At(i).UserName()
		if err != nil {
			return "", err
		}
		people = append(people, name+":"+list.At(i).Role().String())
	}
	return strings.Join(people, ","), nil
}

// Command heldgadget is the gadget guest's own tests run to check that the
// results of calls to the host stay intact while held, whatever calls come
// after them (guest/hostcall.go reuses buffers between calls). Its session
// is a Storage: put stores through the host, and get(key) reads the values
// stored under key+"/1" and so on in the order described in Get, and
// answers what it read, joined with "|".
package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/guest"
	"github.com/gadgetd/gadgetd/schema"
)

func init() { guest.Serve(app{}) }

func main() {}

type app struct{}

func (app) Open(ctx context.Context, call schema.Guest_open) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetSession(capnp.Client(schema.Storage_ServerToClient(session{})))
}

type session struct{}

func (session) Put(ctx context.Context, call schema.Storage_put) error {
	key, err := call.Args().Key()
	if err != nil {
		return err
	}
	value, err := call.Args().Value()
	if err != nil {
		return err
	}
	_, release, err := guest.Storage(ctx).PutSync(ctx, func(p schema.Storage_put_Params) error {
		if err := p.SetKey(key); err != nil {
			return err
		}
		return p.SetValue(value)
	})
	release()
	return err
}

// BigSize is the size of the values stored under key+"/big": larger than
// the buffers the SDK keeps for reuse.
const bigSize = 100 << 10

func (session) Get(ctx context.Context, call schema.Storage_get) error {
	key, err := call.Args().Key()
	if err != nil {
		return err
	}
	st := guest.Storage(ctx)
	var errs []error
	get := func(k string) (string, capnp.ReleaseFunc, func() string) {
		res, release, err := st.GetSync(ctx, func(p schema.Storage_get_Params) error { return p.SetKey(key + k) })
		if err != nil {
			errs = append(errs, err)
			return "", release, func() string { return "" }
		}
		value := func() string { v, _ := res.Value(); return string(v) }
		return value(), release, value
	}

	_, release1, value1 := get("/1")
	_, release2, _ := get("/2")
	big, releaseBig, bigNow := get("/big")
	release2() // its buffer is free again…
	_, release3, value3 := get("/3")
	release2() // …and reused by /3: a second release must leave /3 alone
	bigIntact := bigNow() == big && len(big) == bigSize
	releaseBig()
	_, release4, value4 := get("/4")
	// A call whose params are built with a call of their own: its key is
	// the value stored under key+"/ptr".
	res5, release5, err := st.GetSync(ctx, func(p schema.Storage_get_Params) error {
		ptr, release, _ := get("/ptr")
		defer release()
		return p.SetKey(ptr)
	})
	if err != nil {
		errs = append(errs, err)
	}
	// Params larger than the buffer the SDK keeps for them.
	echo := bytes.Repeat([]byte("e"), bigSize)
	_, releasePut, err := st.PutSync(ctx, func(p schema.Storage_put_Params) error {
		if err := p.SetKey(key + "/echo"); err != nil {
			return err
		}
		return p.SetValue(echo)
	})
	releasePut()
	if err != nil {
		errs = append(errs, err)
	}
	echoed, releaseEcho, _ := get("/echo")
	releaseEcho()

	v5, _ := res5.Value()
	out := strings.Join([]string{
		value1(), value3(), value4(), string(v5),
		fmt.Sprintf("big intact: %v", bigIntact),
		fmt.Sprintf("echoed: %v", echoed == string(echo)),
	}, "|")
	for _, release := range []capnp.ReleaseFunc{release1, release3, release4, release5} {
		release()
	}
	if len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetFound(true)
	return res.SetValue([]byte(out))
}

func (session) Delete(context.Context, schema.Storage_delete) error {
	return capnp.Unimplemented("heldgadget: delete")
}

func (session) List(context.Context, schema.Storage_list) error {
	return capnp.Unimplemented("heldgadget: list")
}

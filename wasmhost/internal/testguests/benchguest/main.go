// Command benchguest is a guest for the wasmhost benchmarks: the cheapest
// possible call, a loop of guest-to-host calls (through the synchronous
// stubs, as gadgets make them), a crash, and an echo of a
// capability.
package main

import (
	"context"
	"errors"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/guest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost/internal/testguests/benchguest/benchpb"
)

func init() { guest.Serve(app{}) }

func main() {}

type app struct{}

func (app) Open(ctx context.Context, call schema.Guest_open) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetSession(capnp.Client(benchpb.Bench_ServerToClient(bench{})))
}

type bench struct{}

func (bench) Noop(context.Context, benchpb.Bench_noop) error { return nil }

func (bench) HostCalls(ctx context.Context, call benchpb.Bench_hostCalls) error {
	storage := guest.Storage(ctx)
	for i := uint32(0); i < call.Args().N(); i++ {
		_, release, err := storage.GetSync(ctx, func(p schema.Storage_get_Params) error { return p.SetKey("k") })
		release()
		if err != nil {
			return err
		}
	}
	return nil
}

func (bench) Crash(context.Context, benchpb.Bench_crash) error {
	panic(errors.New("crash requested"))
}

func (bench) Echo(ctx context.Context, call benchpb.Bench_echo) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetCap(call.Args().Cap().AddRef())
}

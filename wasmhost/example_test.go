package wasmhost_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// exampleTB lets the example build a guest with the test helper.
type exampleTB struct{ testing.TB }

func (exampleTB) Helper()                           {}
func (exampleTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// Run a gadget: compile its module, give it a Host, open a session on its
// main object and call the session's own schema-defined methods.
func Example() {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.WithCompilationCacheDir(sharedCacheDir(nil)))
	if err != nil {
		panic(err)
	}
	defer rt.Close(ctx)
	mod, err := rt.Compile(ctx, wasmbuild.ForTest(exampleTB{}, counterPkg))
	if err != nil {
		panic(err)
	}
	defer mod.Close(ctx)

	host := memhost.New() // storage and log; in gadgetd, the server's
	gadget := rt.NewSandbox(mod, host.Client(), wasmhost.WithCallScope(host.Begin))
	defer gadget.Close()

	main := gadget.Guest()
	defer main.Release()
	opened, release := main.Open(ctx, func(p schema.Guest_open_Params) error {
		caller, err := p.NewCaller()
		if err != nil {
			return err
		}
		return caller.SetUserName("ada")
	})
	defer release()
	counter := counterpb.Counter(opened.Session()) // pipelined: no wait for open

	for range 2 {
		f, release := counter.Increment(ctx, nil)
		res, err := f.Struct()
		if err != nil {
			panic(err)
		}
		fmt.Println("value:", res.Value())
		release()
	}
	// Output:
	// value: 1
	// value: 2
}

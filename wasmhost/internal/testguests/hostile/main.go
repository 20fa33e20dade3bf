// Command hostile is a test gadget that misbehaves on request. Its sessions
// speak schema.Storage as a generic command interface: get(key) runs the
// command named by key and returns what happened as value. Commands that
// misbehave first log "<command>: started" through Host.log, so a test knows
// the guest is inside the hostile part before it checks that others are
// still served.
//
// Commands:
//
//	ok               answers "ok"
//	id               a random id drawn when this instance started
//	whoami           the user id the session was opened for
//	spin             loops forever without calling anything
//	hostloop         calls Host.log in a loop forever
//	alloc            allocates and keeps 1 MiB blocks forever
//	recurse          recurses without bound
//	goroutines       starts goroutines without bound, each holding memory
//	huge:N           answers with N bytes
//	panic            panics
//	exit             calls os.Exit(3)
//	put-then-panic   puts key "k1" in storage, then panics
//	put-then-fail    puts key "k1" in storage, then returns an error
//	sleep:MS         sleeps MS milliseconds, then answers "slept"
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost/guest"
)

func init() { guest.Serve(app{}) }

func main() {}

var instanceID = rand.Text()

type app struct{}

func (app) Open(ctx context.Context, call schema.Guest_open) error {
	c, err := call.Args().Caller()
	if err != nil {
		return err
	}
	user, _ := c.UserId()
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetSession(capnp.Client(schema.Storage_ServerToClient(&session{user: user})))
}

type session struct{ user string }

func logf(ctx context.Context, format string, args ...any) {
	f, release := guest.Host().Log(ctx, func(p schema.Host_log_Params) error {
		return p.SetText(fmt.Sprintf(format, args...))
	})
	defer release()
	f.Struct()
}

// sink keeps allocations reachable so the compiler and GC cannot drop them.
var sink [][]byte

func recurse(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	return recurse(n+1) + int(pad[(n+1)%64])
}

func (s *session) Get(ctx context.Context, call schema.Storage_get) error {
	cmd, err := call.Args().Key()
	if err != nil {
		return err
	}
	name, arg, _ := strings.Cut(cmd, ":")
	var out []byte
	switch name {
	case "ok":
		out = []byte("ok")
	case "id":
		out = []byte(instanceID)
	case "whoami":
		out = []byte(s.user)
	case "spin":
		logf(ctx, "spin: started")
		for {
		}
	case "hostloop":
		logf(ctx, "hostloop: started")
		for i := 0; ; i++ {
			logf(ctx, "hostloop %d", i)
		}
	case "alloc":
		logf(ctx, "alloc: started")
		for {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = 1
			}
			sink = append(sink, b)
		}
	case "recurse":
		logf(ctx, "recurse: started")
		out = []byte(strconv.Itoa(recurse(0)))
	case "goroutines":
		logf(ctx, "goroutines: started")
		block := make(chan struct{})
		for {
			go func() {
				buf := make([]byte, 4096)
				<-block
				sink = append(sink, buf)
			}()
		}
	case "huge":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return err
		}
		out = make([]byte, n)
	case "panic":
		panic("hostile gadget panics on purpose")
	case "exit":
		os.Exit(3)
	case "put-then-panic", "put-then-fail":
		sf, srelease := guest.Host().Storage(ctx, nil)
		defer srelease()
		f, release := sf.Storage().Put(ctx, func(p schema.Storage_put_Params) error {
			if err := p.SetKey("k1"); err != nil {
				return err
			}
			return p.SetValue([]byte("written by a call that failed"))
		})
		_, err := f.Struct()
		release()
		if err != nil {
			return err
		}
		if name == "put-then-panic" {
			panic("hostile gadget panics after a storage write")
		}
		return errors.New("hostile gadget fails after a storage write")
	case "sleep":
		ms, err := strconv.Atoi(arg)
		if err != nil {
			return err
		}
		logf(ctx, "sleep: started")
		time.Sleep(time.Duration(ms) * time.Millisecond)
		out = []byte("slept")
	default:
		return fmt.Errorf("unknown command %q", cmd)
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetFound(true)
	return res.SetValue(out)
}

func (s *session) Put(ctx context.Context, call schema.Storage_put) error {
	return errors.New("not a command")
}

func (s *session) Delete(ctx context.Context, call schema.Storage_delete) error {
	return errors.New("not a command")
}

func (s *session) List(ctx context.Context, call schema.Storage_list) error {
	return errors.New("not a command")
}

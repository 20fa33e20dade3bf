// Command hostile is a test gadget that attacks its sandbox on request, and
// reports what it can reach of the machine it runs on.
//
// Its sessions speak schema.Storage as a generic command interface: get(key)
// runs the command named by key and answers with what happened as value.
// Commands that misbehave first log "<command>: started" through Host.log, so
// a test knows the guest is inside the hostile part before it checks that
// other gadgets are still served.
//
// Attacks:
//
//	ok               answers "ok"
//	id               a random id drawn when this instance started
//	whoami           the user id the session was opened for
//	spin             loops forever without calling anything
//	hostloop         calls Host.log in a loop forever
//	alloc            allocates and keeps 1 MiB blocks forever, logging
//	                 "alloc: holding N MiB" after each
//	recurse          recurses without bound
//	goroutines       starts goroutines without bound, each holding memory
//	huge:N           answers with N bytes
//	panic            panics
//	exit             calls os.Exit(3)
//	put-then-panic   puts key "k1" in storage, then panics
//	put-then-fail    puts key "k1" in storage, then returns an error
//	sleep:MS         sleeps MS milliseconds, then answers "slept"
//	hold:N           allocates N MiB more, keeps it, answers "held"
//
// Probes (errors are observations too: they answer "error: ..."):
//
//	readfile:PATH    os.ReadFile
//	readdir:PATH     os.ReadDir
//	writefile:PATH   os.WriteFile
//	environ          os.Environ, one per line
//	args             os.Args, one per line
//	fds              which file descriptors 0..63 exist
//	dial:ADDR        net.Dial("tcp", ADDR)
//	listen:ADDR      net.Listen("tcp", ADDR)
//	exec             os.StartProcess("/bin/sh")
//	now              time.Now() in Unix nanoseconds
//	rand             16 bytes of crypto/rand, then math/rand and math/rand/v2
//
// Initialization: a guest has no input before its first call but its
// storage, so a test arms a failure in init there. If storage key
// "init-mode" holds "put-then-panic", init puts "init-key" and panics.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand"
	mrand2 "math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/guest"
	"github.com/gadgetd/gadgetd/schema"
)

func init() {
	guest.Serve(app{})
	ctx := context.Background()
	sf, release := guest.Host().Storage(ctx, nil)
	defer release()
	f, grelease := sf.Storage().Get(ctx, func(p schema.Storage_get_Params) error {
		return p.SetKey("init-mode")
	})
	defer grelease()
	res, err := f.Struct()
	if err != nil {
		panic("hostile: reading init-mode: " + err.Error())
	}
	if mode, _ := res.Value(); string(mode) == "put-then-panic" {
		if err := put(ctx, "init-key", "written during init"); err != nil {
			panic("hostile: " + err.Error())
		}
		panic("hostile gadget panics during initialization after a storage write")
	}
}

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
		for n := 1; ; n++ {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = 1
			}
			sink = append(sink, b)
			logf(ctx, "alloc: holding %d MiB", n)
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
		if err := put(ctx, "k1", "written by a call that failed"); err != nil {
			return err
		}
		if name == "put-then-panic" {
			panic("hostile gadget panics after a storage write")
		}
		return errors.New("hostile gadget fails after a storage write")
	case "hold":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return err
		}
		for range n {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = 1
			}
			sink = append(sink, b)
		}
		out = []byte("held")
	case "sleep":
		ms, err := strconv.Atoi(arg)
		if err != nil {
			return err
		}
		logf(ctx, "sleep: started")
		time.Sleep(time.Duration(ms) * time.Millisecond)
		out = []byte("slept")
	default:
		var ok bool
		if out, ok = probe(name, arg); !ok {
			return fmt.Errorf("unknown command %q", cmd)
		}
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetFound(true)
	return res.SetValue(out)
}

func put(ctx context.Context, key, value string) error {
	sf, release := guest.Host().Storage(ctx, nil)
	defer release()
	f, prelease := sf.Storage().Put(ctx, func(p schema.Storage_put_Params) error {
		if err := p.SetKey(key); err != nil {
			return err
		}
		return p.SetValue([]byte(value))
	})
	defer prelease()
	_, err := f.Struct()
	return err
}

func observe(what string, err error) []byte {
	if err != nil {
		return []byte("error: " + err.Error())
	}
	return []byte(what)
}

// probe runs the probe name, if there is one.
func probe(name, arg string) ([]byte, bool) {
	switch name {
	case "readfile":
		b, err := os.ReadFile(arg)
		return observe("read: "+string(b), err), true
	case "readdir":
		es, err := os.ReadDir(arg)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return observe("entries: "+strings.Join(names, ","), err), true
	case "writefile":
		return observe("wrote", os.WriteFile(arg, []byte("hostile"), 0o644)), true
	case "environ":
		return []byte(strings.Join(os.Environ(), "\n")), true
	case "args":
		return []byte(strings.Join(os.Args, "\n")), true
	case "fds":
		var open []string
		for fd := 0; fd < 64; fd++ {
			if _, err := os.NewFile(uintptr(fd), "probe").Stat(); err == nil {
				open = append(open, strconv.Itoa(fd))
			}
		}
		return []byte(strings.Join(open, ",")), true
	case "dial":
		c, err := net.DialTimeout("tcp", arg, time.Second)
		if err == nil {
			c.Close()
		}
		return observe("connected", err), true
	case "listen":
		l, err := net.Listen("tcp", arg)
		if err != nil {
			return observe("", err), true
		}
		defer l.Close()
		return []byte("listening on " + l.Addr().String()), true
	case "exec":
		p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "true"}, &os.ProcAttr{})
		if err == nil {
			p.Kill()
		}
		return observe("started a process", err), true
	case "now":
		return []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), true
	case "rand":
		b := make([]byte, 16)
		rand.Read(b)
		return fmt.Appendf(nil, "%s %x %x", hex.EncodeToString(b), mrand.Uint64(), mrand2.Uint64()), true
	}
	return nil, false
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

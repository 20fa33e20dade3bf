// Command counter-client talks to a counter gadget from Go, the way any
// client program would: dial, log in, open the gadget, call its session.
//
//	GADGETD_TOKEN=... go run ./examples/counter/counter-client increment ID
//	GADGETD_TOKEN=... go run ./examples/counter/counter-client get ID
//	GADGETD_TOKEN=... go run ./examples/counter/counter-client watch ID
//
// The whole chain (login, open the gadget, open a session, call it) is sent
// as one pipelined batch: it costs one network round trip, not four.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
	"github.com/gadgetd/gadgetd/schema"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: counter-client increment|get|watch GADGET-ID   (token in $GADGETD_TOKEN)")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "counter-client:", client.Message(err))
		os.Exit(1)
	}
}

func run(verb, id string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	addr, token, opts, err := client.FromEnv()
	if err != nil {
		return err
	}
	conn, err := client.Dial(ctx, addr, opts...)
	if err != nil {
		return err
	}
	defer conn.Close()

	ws, release := conn.Login(ctx, token)
	defer release()
	opened, release := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	defer release()
	session, release := opened.Gadget().Open(ctx, nil)
	defer release()
	counter := counterpb.Counter(session.Session())

	switch verb {
	case "increment":
		f, release := counter.Increment(ctx, nil)
		defer release()
		return printValue(f.Struct())
	case "get":
		f, release := counter.Get(ctx, nil)
		defer release()
		return printValue(f.Struct())
	case "watch":
		return watch(ctx, conn, counter)
	default:
		return fmt.Errorf("unknown command %q: want increment, get or watch", verb)
	}
}

// watch prints every change until ctx ends. The subscription lasts while
// its handle is held; the gadget releasing our listener means it ended (the
// gadget's instance stopped, say, idle), and then watch subscribes again.
func watch(ctx context.Context, conn *client.Conn, counter counterpb.Counter) error {
	for {
		ended := make(chan struct{})
		l := counterpb.Listener(client.Export(counterpb.Listener_Methods(nil, printer{}), func() { close(ended) }))
		f, release := counter.Watch(ctx, func(p counterpb.Counter_watch_Params) error {
			return p.SetListener(l)
		})
		err := printValue(f.Struct())
		if err != nil {
			release()
			return err
		}
		fmt.Fprintln(os.Stderr, "watching; increment from another terminal, ^C to stop")
		select {
		case <-ctx.Done():
			release()
			return nil
		case <-conn.Done():
			release()
			return fmt.Errorf("connection closed")
		case <-ended:
			release() // drops the handle of the ended subscription
			fmt.Fprintln(os.Stderr, "the subscription ended; watching again")
		}
	}
}

type valueResult interface{ Value() int64 }

func printValue[T valueResult](res T, err error) error {
	if err != nil {
		return err
	}
	fmt.Println(res.Value())
	return nil
}

// printer prints every change the counter announces.
type printer struct{}

func (printer) Changed(ctx context.Context, call counterpb.Listener_changed) error {
	fmt.Println(call.Args().Value())
	return nil
}

package rpcguard_test

import (
	"bytes"
	"net"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"
	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
)

// seedStream encodes RPC messages the way a client would send them.
func seedStream(f *testing.F, builds ...func(rpccp.Message) error) []byte {
	var buf bytes.Buffer
	enc := capnp.NewEncoder(&buf)
	for _, build := range builds {
		msg, seg, err := capnp.NewMessage(capnp.MultiSegment(nil))
		if err != nil {
			f.Fatal(err)
		}
		m, err := rpccp.NewRootMessage(seg)
		if err != nil {
			f.Fatal(err)
		}
		if err := build(m); err != nil {
			f.Fatal(err)
		}
		if err := enc.Encode(msg); err != nil {
			f.Fatal(err)
		}
	}
	return buf.Bytes()
}

// FuzzGuardedConnSurvivesArbitraryBytes feeds whatever a hostile peer might
// send through the guarded transport into a real rpc.Conn. A panic anywhere,
// including go-capnp's own goroutines, kills the fuzzing process and fails
// the run; the connection must also end within a bounded time once the peer
// hangs up.
func FuzzGuardedConnSurvivesArbitraryBytes(f *testing.F) {
	bootstrap := func(m rpccp.Message) error {
		b, err := m.NewBootstrap()
		b.SetQuestionId(0)
		return err
	}
	call := func(pathLen int) func(m rpccp.Message) error {
		return func(m rpccp.Message) error {
			c, err := m.NewCall()
			if err != nil {
				return err
			}
			c.SetQuestionId(1)
			c.SetInterfaceId(counterpb.Counter_TypeID)
			c.SetMethodId(0)
			tgt, err := c.NewTarget()
			if err != nil {
				return err
			}
			pa, err := tgt.NewPromisedAnswer()
			if err != nil {
				return err
			}
			pa.SetQuestionId(0)
			if pathLen > 0 {
				ops, err := pa.NewTransform(int32(pathLen))
				if err != nil {
					return err
				}
				for i := 0; i < ops.Len(); i++ {
					ops.At(i).SetGetPointerField(uint16(i))
				}
			}
			p, err := c.NewParams()
			if err != nil {
				return err
			}
			_, err = p.NewCapTable(1)
			return err
		}
	}
	finish := func(m rpccp.Message) error {
		fin, err := m.NewFinish()
		fin.SetQuestionId(1)
		return err
	}
	f.Add(seedStream(f, bootstrap))
	f.Add(seedStream(f, bootstrap, call(0)))
	f.Add(seedStream(f, bootstrap, call(2), finish))
	f.Add(seedStream(f, call(1), call(0)))
	f.Add([]byte{})

	lim := rpcguard.DefaultLimits()
	lim.MessageTimeout = time.Second
	f.Fuzz(func(t *testing.T, stream []byte) {
		server, peer := net.Pipe()
		counter := &plaincounter.Counter{}
		conn := rpc.NewConn(rpcguard.NewTransport(server, lim), &rpc.Options{
			BootstrapClient: capnp.Client(counter.Client()),
		})
		// Read and discard what the server answers, so it never blocks
		// writing to us.
		go func() {
			buf := make([]byte, 4096)
			for {
				if _, err := peer.Read(buf); err != nil {
					return
				}
			}
		}()
		peer.SetWriteDeadline(time.Now().Add(2 * time.Second))
		peer.Write(stream)
		peer.Close()
		select {
		case <-conn.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("connection still open 10 s after the peer hung up")
		}
	})
}

package capserver_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"
	"capnproto.org/go/capnp/v3/server"

	"github.com/gadgetd/gadgetd/internal/capserver"
)

// shutdownCounter is a capability that counts its Shutdown, which go-capnp
// runs once the last reference to it anywhere is released.
type shutdownCounter struct{ n *atomic.Int32 }

func (s shutdownCounter) Shutdown() { s.n.Add(1) }

// go-capnp v3.1.0-alpha.2 released only the last capability of a reply it
// had sent: the others were kept for the life of the process
// (third_party/go-capnp/PATCHES.md). A server whose method answers with
// three capabilities sees all three released once the client lets go.
func TestEveryCapabilityInAReplyIsReleasedOnceTheClientLetsGo(t *testing.T) {
	const caps = 3
	var shutdowns atomic.Int32
	method := capnp.Method{InterfaceID: 0xfeed, MethodID: 0}
	bootstrap := capserver.New([]server.Method{{
		Method: method,
		Impl: func(ctx context.Context, call *server.Call) error {
			res, err := call.AllocResults(capnp.ObjectSize{PointerCount: caps})
			if err != nil {
				return err
			}
			for i := range caps {
				c := capserver.New(nil, nil, shutdownCounter{&shutdowns})
				id := res.Message().CapTable().Add(c)
				if err := res.SetPtr(uint16(i), capnp.NewInterface(res.Segment(), id).ToPtr()); err != nil {
					return err
				}
			}
			return nil
		},
	}}, nil, nil)
	defer bootstrap.Release()

	serverSide, clientSide := net.Pipe()
	serverConn := rpc.NewConn(rpc.NewStreamTransport(serverSide), &rpc.Options{BootstrapClient: bootstrap.AddRef()})
	defer serverConn.Close()
	clientConn := rpc.NewConn(rpc.NewStreamTransport(clientSide), nil)
	defer clientConn.Close()

	ctx := context.Background()
	remote := clientConn.Bootstrap(ctx)
	ans, release := remote.SendCall(ctx, capnp.Send{Method: method})
	res, err := ans.Struct()
	if err != nil {
		t.Fatal(err)
	}
	for i := range caps {
		p, err := res.Ptr(uint16(i))
		if err != nil || !p.Interface().Client().IsValid() {
			t.Fatalf("capability %d of the reply: %v", i, err)
		}
	}
	release()
	remote.Release()

	for deadline := time.Now().Add(time.Minute); shutdowns.Load() < caps; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the reply's %d capabilities were released a minute after the client let go of them", shutdowns.Load(), caps)
		}
	}
}

package server_test

import (
	"context"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/schema"
)

// stallingConn is a client's connection that stops reading when stalled:
// the server's answers then back up in its socket.
type stallingConn struct {
	net.Conn
	stall     chan struct{} // closed: reads block until Close
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *stallingConn) Read(p []byte) (int, error) {
	select {
	case <-c.stall:
		<-c.closed
		return 0, io.EOF
	default:
		return c.Conn.Read(p)
	}
}

func (c *stallingConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// A client that stops reading its socket while it keeps calling cannot make
// the server hold the answers: once the server's writes block, it reads
// nothing more from that client, so the calls stay in the socket. Before,
// every answer waited in rpc.Conn's unbounded send queue, and one
// connection asking for 4 MB answers grew the server by gigabytes.
func TestAClientThatStopsReadingCannotMakeTheServerHoldItsAnswers(t *testing.T) {
	const (
		answer  = 4 << 20
		batches = 10
		batch   = 20 // under the gadget's queue of 64
	)
	h := start(t, t.TempDir())
	token := h.token("mallory")
	ctx := testCtx(t)
	if err := install(t, h.login(t, token), hostileBundle(t)); err != nil {
		t.Fatal(err)
	}

	nc, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	sc := &stallingConn{Conn: nc, stall: make(chan struct{}), closed: make(chan struct{})}
	conn := client.NewConn(sc)
	defer conn.Close()
	lf, release := conn.Gateway().Login(ctx, func(p schema.Gateway_login_Params) error { return p.SetToken(token) })
	defer release()
	if _, err := lf.Struct(); err != nil {
		t.Fatal(err)
	}
	g, _ := create(t, lf.Workspace(), "hostile")
	s := openHostile(t, g)
	if _, err := command(ctx, s, "ok"); err != nil {
		t.Fatal(err)
	}

	before := heapInUse()
	close(sc.stall)
	var releases []capnp.ReleaseFunc
	defer func() {
		sc.Close()
		for _, r := range releases {
			r()
		}
	}()
	callCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range batches {
		for range batch {
			_, release := s.Get(callCtx, func(p schema.Storage_get_Params) error { return p.SetKey("huge:4194304") })
			releases = append(releases, release)
		}
		time.Sleep(300 * time.Millisecond) // let the gadget work through them
	}
	time.Sleep(time.Second)
	grown := int64(heapInUse()) - int64(before)
	t.Logf("the server grew by %d MiB for %d answers of %d MiB its client did not read", grown>>20, batches*batch, answer>>20)
	if limit := int64(batches * batch * answer / 2); grown > limit {
		t.Errorf("the server holds %d MiB for a client that stopped reading, over half of all %d answers", grown>>20, batches*batch)
	}
	cancel()
	h.requireServing(t, h.token("alice"))
}

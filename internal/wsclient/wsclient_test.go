package wsclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"
	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"
	"github.com/gorilla/websocket"

	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/leakcheck"
	"github.com/gadgetd/gadgetd/internal/wsclient"
)

func TestMain(m *testing.M) {
	leakcheck.Install()
	os.Exit(leakcheck.Verify(m.Run()))
}

// fixed is a counter whose value is always 42.
type fixed struct{}

func (fixed) Increment(context.Context, counterpb.Counter_increment) error {
	return errors.New("fixed")
}
func (fixed) Watch(context.Context, counterpb.Counter_watch) error { return errors.New("fixed") }
func (fixed) Get(_ context.Context, call counterpb.Counter_get) error {
	res, err := call.AllocResults()
	if err == nil {
		res.SetValue(42)
	}
	return err
}

// A call and its answer cross the websocket, each as one binary message,
// with the same transport on the server's side.
func TestACallCrossesTheWebsocket(t *testing.T) {
	var upgrader websocket.Upgrader
	served := make(chan *rpc.Conn, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		served <- rpc.NewConn(wsclient.NewTransport(ws), &rpc.Options{BootstrapClient: capserver.New(counterpb.Counter_Methods(nil, fixed{}), nil, nil)})
	}))
	defer hs.Close()

	conn, err := wsclient.Dial(context.Background(), "ws"+strings.TrimPrefix(hs.URL, "http"))
	if err != nil {
		t.Fatal(err)
	}
	server := <-served
	defer server.Close()
	defer conn.Close()
	counter := counterpb.Counter(conn.Bootstrap(context.Background()))
	defer counter.Release()
	f, release := counter.Get(context.Background(), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	if res.Value() != 42 {
		t.Fatalf("get answered %d, want 42", res.Value())
	}
}

// A handshake the server refuses is a RefusedError with its status and
// the reason the server gave.
func TestARefusedHandshakeSaysWhy(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "ticket already used", http.StatusForbidden)
	}))
	defer hs.Close()
	_, err := wsclient.Dial(context.Background(), "ws"+strings.TrimPrefix(hs.URL, "http"))
	var refused *wsclient.RefusedError
	if !errors.As(err, &refused) || refused.Status != http.StatusForbidden || refused.Reason != "ticket already used" {
		t.Fatalf("dialing a server that answers 403: %v; want a RefusedError with the status and the reason", err)
	}
}

// An Abort the server sends (a refusal, say) is kept: the calls in flight
// fail only with "connection closed", and AbortReason says why.
func TestTheServersAbortReasonIsKept(t *testing.T) {
	var upgrader websocket.Upgrader
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		msg, seg, _ := capnp.NewMessage(capnp.SingleSegment(nil))
		m, _ := rpccp.NewRootMessage(seg)
		abort, _ := m.NewAbort()
		abort.SetType(rpccp.Exception_Type_overloaded)
		abort.SetReason("server busy: try again later")
		buf, _ := msg.Marshal()
		ws.WriteMessage(websocket.BinaryMessage, buf)
		ws.ReadMessage() // until the client hangs up
	}))
	defer hs.Close()

	conn, err := wsclient.Dial(context.Background(), "ws"+strings.TrimPrefix(hs.URL, "http"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	<-conn.Done()
	if got := conn.AbortReason(); got != "server busy: try again later" {
		t.Fatalf("AbortReason() = %q after the server aborted with %q", got, "server busy: try again later")
	}
}

package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestAWriteAfterThePeerClosedIsAnOrdinaryHangUp: once a client has closed
// its websocket, the server's next write fails with an error rpcguard logs
// at debug (its text ends "connection closed"), not gorilla's "close sent",
// which it logged as an ERROR for every client that closed mid-answer.
func TestAWriteAfterThePeerClosedIsAnOrdinaryHangUp(t *testing.T) {
	accepted := make(chan *wsConn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		accepted <- &wsConn{ws: ws}
	}))
	defer srv.Close()
	client, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	conn := <-accepted
	defer conn.Close()

	if err := client.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.NextMessage(1 << 10); err != io.EOF {
		t.Fatalf("reading after the peer's close: %v, want io.EOF", err)
	}
	_, err = conn.Write([]byte("answer"))
	if err == nil || !strings.HasSuffix(err.Error(), "connection closed") {
		t.Fatalf("a write after the peer's close: %v, want an error ending in \"connection closed\"", err)
	}
}

package server_test

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

// TestOneUsersStalledMessagesLeaveOthersServed: with WithMaxReceiving, a
// user whose connections each stall part-way through a large message is
// refused past the per-user share, on its own connections, while another
// user's existing connection and a new login are served. Four such
// messages would fill the server's budget (an outside tester's F2: one
// user's 33 connections filled 256 MiB, and every other peer's next
// message closed its connection).
func TestOneUsersStalledMessagesLeaveOthersServed(t *testing.T) {
	var log lockedBuffer
	h := start(t, t.TempDir(), server.WithMaxMessageSize(1<<20), server.WithMaxReceiving(2<<20, 4<<20),
		server.WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	alice := h.login(t, h.token("alice"))
	requireListed(t, alice, "alice, before the attack")

	mallory := h.token("mallory")
	for range 4 {
		nc, err := net.Dial("tcp", h.addr)
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewConn(nc)
		t.Cleanup(func() { c.Close() })
		loginOn(t, c, mallory)
		// A message of 1 MiB, sent but its last 64 KiB: the bytes the
		// client still writes (the login's Finish) land inside it.
		const body = 1<<20 - 8
		msg := make([]byte, 8+body-64<<10)
		binary.LittleEndian.PutUint32(msg[4:], body/8)
		nc.Write(msg) // fails once the server has refused it
	}
	// At most two of the four fit in mallory's 2 MiB.
	const refusal = "of unfinished messages arriving on its connections, the per-user limit"
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(log.String(), refusal) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("mallory's messages past her share were not refused with the per-user limit; the log:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}

	requireListed(t, alice, "alice's connection, while mallory holds her share")
	requireListed(t, h.login(t, h.token("alice")), "alice's new login, while mallory holds her share")
}

func requireListed(t *testing.T, ws schema.Workspace, who string) {
	t.Helper()
	f, release := ws.Blueprints(testCtx(t), nil)
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Fatalf("%s: %v", who, err)
	}
}

// lockedBuffer is a bytes.Buffer the server's goroutines may log into.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

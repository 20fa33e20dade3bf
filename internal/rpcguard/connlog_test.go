package rpcguard_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
)

// disembargoToBootstrap is a Disembargo rpc.Conn cannot honour: a sender
// loopback aimed at the bootstrap answer, which is no promise. rpc.Conn logs
// an error for each one and goes on.
func disembargoToBootstrap(id uint32) func(rpccp.Message) error {
	return func(m rpccp.Message) error {
		d, err := m.NewDisembargo()
		if err != nil {
			return err
		}
		tgt, err := d.NewTarget()
		if err != nil {
			return err
		}
		pa, err := tgt.NewPromisedAnswer()
		if err != nil {
			return err
		}
		pa.SetQuestionId(0)
		d.Context().SetSenderLoopback(id)
		return nil
	}
}

// encodeAll encodes the messages build makes, back to back, to be written
// at once: past its bound the server hangs up on the writer.
func encodeAll(t *testing.T, builds ...func(rpccp.Message) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := capnp.NewEncoder(&buf)
	for _, build := range builds {
		msg, seg, err := capnp.NewMessage(capnp.MultiSegment(nil))
		if err != nil {
			t.Fatal(err)
		}
		m, err := rpccp.NewRootMessage(seg)
		if err != nil {
			t.Fatal(err)
		}
		if err := build(m); err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(msg); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// An outside tester made the server write one ERROR line per 80-byte
// Disembargo: 150,001 lines (33 MB) in 2 s from one connection, which stayed
// open. Now each connection may cause a burst of errors, and the one past it
// closes the connection with a last line that says so; nothing more is
// logged about it. This holds for a peer that has logged in, whose lines no
// other bound limits, and for one that has not.
func TestAPeerThatKeepsCausingErrorsIsClosedAndItsLogLinesAreBounded(t *testing.T) {
	const sent = 200
	for _, loggedIn := range []bool{true, false} {
		name := map[bool]string{true: "logged in", false: "not logged in"}[loggedIn]
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			logs := &logBuffer{}
			logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			bootstrap := capnp.Client((&plaincounter.Counter{}).Client())
			defer bootstrap.Release()
			// The strangers' shared log bucket is made large, so that only
			// the per-connection bound can hold the lines back.
			lim := rpcguard.Limits{Unauthenticated: rpcguard.Budget{LogBurst: 10 * sent}}
			srv := rpcguard.NewServer(func(p *rpcguard.Peer) capnp.Client {
				if loggedIn {
					p.Authenticated("tester")
				}
				return bootstrap.AddRef()
			}, 0, lim, logger)
			go srv.Serve(ln)
			defer srv.Close(t.Context())
			addr := ln.Addr().String()

			p := dialRaw(t, addr)
			p.bootstrap(0)
			// Once the bootstrap has returned, nothing is held for it: every
			// Disembargo reaches rpc.Conn.
			p.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			if msg, err := p.dec.Decode(); err != nil {
				t.Fatalf("waiting for the bootstrap: %v", err)
			} else if m, _ := rpccp.ReadRootMessage(msg); m.Which() != rpccp.Message_Which_return {
				t.Fatalf("the server sent a %v, not the bootstrap's Return", m.Which())
			}
			builds := make([]func(rpccp.Message) error, sent)
			for i := range builds {
				builds[i] = disembargoToBootstrap(uint32(i))
			}
			p.conn.Write(encodeAll(t, builds...)) // the server may hang up part-way

			// The server closes the connection (a read ends, with its Abort
			// or without: it may reset a connection it left unread).
			p.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			for {
				if _, err := p.dec.Decode(); err != nil {
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						t.Fatalf("the connection is still open 30 s after %d errors", sent)
					}
					break
				}
			}
			waitConns(t, srv, 0)

			var errorLines, closedLines int
			for _, r := range logs.records(t, p.conn.LocalAddr().String()) {
				switch {
				case r.Level == slog.LevelError.String():
					errorLines++
				case strings.Contains(r.Msg, "caused too many errors"):
					closedLines++
				}
			}
			// A token comes back every 10 s: one more may pass on a slow run.
			if errorLines < rpcguard.ConnErrorBurst || errorLines > rpcguard.ConnErrorBurst+3 {
				t.Errorf("%d error lines for %d errors, want the burst of %d", errorLines, sent, rpcguard.ConnErrorBurst)
			}
			if closedLines != 1 {
				t.Errorf("%d lines say the connection was closed for its errors, want 1", closedLines)
			}
			requireServesOthers(t, addr)
		})
	}
}

package rpcguard_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
)

// A peer may park messages behind an answer that is still running: the
// transport holds each one until that answer's Return is sent. It holds at
// most 2×MaxInFlight of them (releasing them rescans them all, so a long
// list would make every Return cost the square of its length). The message
// past the bound closes the connection with an Abort saying how many were
// held, so what one peer makes the server hold is bounded by its limits, not
// by how much it sends, and the server serves everyone else meanwhile.
// Without the bound the server kept every message and the connection open,
// and abortReason failed the test.
func TestMessagesHeldBehindASlowAnswerAreBounded(t *testing.T) {
	const limit = 8
	gate := make(chan struct{})
	addr, _ := serve(t, &plaincounter.Counter{Gate: gate}, 0, rpcguard.Limits{MaxInFlight: limit})
	t.Cleanup(func() { close(gate) }) // before the server closes: let the slow increment end

	attacker := dialRaw(t, addr)
	attacker.bootstrap(0)
	// The bootstrap must have returned, so the only call in flight is the
	// slow one and every call below is held rather than refused.
	attacker.awaitReturn(0)
	const slow = 1
	attacker.call(slow, 0, methodIncrement, 0, 0) // waits for the gate
	held := 0
	// Calls pipelined onto the slow answer, up to MaxInFlight in flight...
	for q := uint32(slow + 1); q <= limit; q++ {
		attacker.call(q, slow, methodGet, 0, 0)
		held++
	}
	// ...a Finish behind each of them...
	for q := uint32(slow + 1); q <= limit; q++ {
		attacker.finish(q)
		held++
	}
	// ...and Disembargos aimed at the slow answer, up to the bound and
	// one past it.
	for ; held <= 2*limit; held++ {
		attacker.disembargo(slow)
	}

	want := fmt.Sprintf("%d messages wait for answers that have not returned", 2*limit)
	if reason := attacker.abortReason(10 * time.Second); !strings.Contains(reason, want) {
		t.Fatalf("abort reason = %q, want %q", reason, want)
	}
	attacker.requireHungUp()
	requireServesOthers(t, addr)
}

// The bytes of held messages are bounded as well as their number: each may
// be as large as MaxMessageSize (9 MiB), so 2×MaxInFlight of them alone
// could hold gigabytes. Held messages other than calls (whose bytes count in
// MaxInFlightBytes already) may hold MaxInFlightBytes more; here 1 MiB,
// which Disembargos padded to 200 KiB pass long before their number does.
func TestBytesHeldBehindASlowAnswerAreBounded(t *testing.T) {
	const limit, budget, padding = 8, 1 << 20, 200 << 10
	gate := make(chan struct{})
	addr, _ := serve(t, &plaincounter.Counter{Gate: gate}, 0, rpcguard.Limits{MaxInFlight: limit, MaxInFlightBytes: budget})
	t.Cleanup(func() { close(gate) })

	attacker := dialRaw(t, addr)
	attacker.bootstrap(0)
	attacker.awaitReturn(0)
	const slow = 1
	attacker.call(slow, 0, methodIncrement, 0, 0)
	// Five fit the bytes bound, far below the count bound; the sixth is
	// past it.
	for range budget/padding + 1 {
		attacker.send(func(m rpccp.Message) error {
			if _, err := capnp.NewData(m.Segment(), make([]byte, padding)); err != nil {
				return err
			}
			return buildDisembargo(m, slow)
		})
	}

	reason := attacker.abortReason(10 * time.Second)
	if want := fmt.Sprintf("the limit is %d", budget); !strings.Contains(reason, "bytes of messages wait for answers that have not returned") || !strings.Contains(reason, want) {
		t.Fatalf("abort reason = %q, want it to name the bytes held and %q", reason, want)
	}
	attacker.requireHungUp()
	requireServesOthers(t, addr)
}

// awaitReturn reads the server's messages until the Return for question
// qid, and fails the test with the server's reason if it aborts instead.
func (p *rawPeer) awaitReturn(qid uint32) {
	p.t.Helper()
	p.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer p.conn.SetReadDeadline(time.Time{})
	for {
		msg, err := p.dec.Decode()
		if err != nil {
			p.t.Fatalf("waiting for the return of question %d: %v", qid, err)
		}
		m, err := rpccp.ReadRootMessage(msg)
		if err != nil {
			p.t.Fatal(err)
		}
		switch m.Which() {
		case rpccp.Message_Which_abort:
			ex, _ := m.Abort()
			reason, _ := ex.Reason()
			p.t.Fatalf("waiting for the return of question %d, the server aborted: %s", qid, reason)
		case rpccp.Message_Which_return:
			if ret, err := m.Return(); err == nil && ret.AnswerId() == qid {
				return
			}
		}
	}
}

func (p *rawPeer) finish(qid uint32) {
	p.send(func(m rpccp.Message) error {
		fin, err := m.NewFinish()
		fin.SetQuestionId(qid)
		return err
	})
}

// disembargo sends a senderLoopback Disembargo aimed at the answer to
// question target.
func (p *rawPeer) disembargo(target uint32) {
	p.send(func(m rpccp.Message) error { return buildDisembargo(m, target) })
}

func buildDisembargo(m rpccp.Message, target uint32) error {
	d, err := m.NewDisembargo()
	if err != nil {
		return err
	}
	d.Context().SetSenderLoopback(0)
	tgt, err := d.NewTarget()
	if err != nil {
		return err
	}
	pa, err := tgt.NewPromisedAnswer()
	pa.SetQuestionId(target)
	return err
}

// requireHungUp fails the test unless the server has closed the connection:
// after its Abort it reads, and holds, nothing more from the peer.
func (p *rawPeer) requireHungUp() {
	p.t.Helper()
	p.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := p.dec.Decode()
	var ne net.Error
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		p.t.Fatalf("after its Abort the server kept the connection open (read: %v)", err)
	}
}

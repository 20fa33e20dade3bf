package rpcguard_test

import (
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
)

// A peer may reuse a question id as soon as it has the Return and has sent
// the Finish; capnp-es does, asking question 1 again and again. The guard
// must find the id free when that call arrives, even if the goroutine that
// wrote the Return is descheduled right after the write (the hook stands in
// for that). It used to settle the answer only after that point, so the call
// was refused as "question 1 is already in use" and the connection closed:
// web/js's TestJSClientAgainstGadgetd failed that way under -race on a
// loaded machine. Settled after the write's critical section, this test
// fails on its first round.
func TestAQuestionIDIsFreeOnceThePeerHasTheReturnAndSentTheFinish(t *testing.T) {
	rpcguard.SetWriteHook(t, func() { time.Sleep(10 * time.Millisecond) })
	addr, _ := serve(t, &plaincounter.Counter{}, 0, rpcguard.Limits{})

	peer := dialRaw(t, addr)
	peer.bootstrap(0)
	peer.awaitReturn(0)
	for range 10 {
		peer.call(1, 0, methodGet, 0, 0)
		peer.awaitReturn(1)
		peer.finish(1)
	}
}

package rpcguard

// Design: the Transport's own send queue. rpc.Conn's send goroutine calls
// Send for each message it queued, in order, and waits for it; left alone,
// answers for a peer that does not read would pile up in rpc.Conn's queue,
// where the Transport cannot see them, let alone weigh them. So Send puts
// the message in the Transport's queue and returns at once: rpc.Conn's
// queue stays empty, and every message built for the peer and not yet
// written is here, with its size. rpc.Conn releases a message once Send
// returns; a queued message's release waits until it has been written
// (outgoing.Release), so the queue holds no copies. One writer goroutine per Transport
// (started by the first Send, ended by Close or a failed write) writes the
// queue in order. The queued bytes count against the connection's, its
// user's and the server's in-flight byte bounds until written (admit
// refuses calls past them), and a call's Return settles it only once
// written. The reader reads nothing while the queue is not empty, so a peer
// that stops reading also stops being read. An Abort is written before
// Send returns, since rpc.Conn closes the transport right after it; what
// was still queued is dropped first, as rpc.Conn drops its own queue. All
// queue state is guarded by Transport.mu; queueCond wakes the writer, and
// readerCond the reader waiting in awaitSent.

import (
	"sync"

	"capnproto.org/go/capnp/v3/exc"
	"capnproto.org/go/capnp/v3/rpc/transport"
	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"
)

// queued is one outgoing message waiting to be written.
type queued struct {
	out      *outgoing
	size     uint64
	isReturn bool
	answer   uint32    // the question a Return answers
	user     *inFlight // the user budget its bytes are charged to, if any
	done     chan error
}

// enqueue puts o in the send queue, charging its bytes. For an Abort it
// waits until the message is written.
func (t *Transport) enqueue(o *outgoing) error {
	m := o.Message()
	size, err := m.Message().TotalSize()
	if err != nil {
		return exc.WrapError("send", err)
	}
	q := &queued{out: o, size: size}
	if m.Which() == rpccp.Message_Which_return {
		if ret, err := m.Return(); err == nil {
			q.isReturn, q.answer = true, ret.AnswerId()
		}
	}
	if m.Which() == rpccp.Message_Which_abort {
		q.done = make(chan error, 1)
	}
	t.writer.Do(func() { go t.write() })
	t.mu.Lock()
	if t.closed || t.writeErr != nil {
		err := t.writeErr
		t.mu.Unlock()
		if err == nil {
			err = errClosed
		}
		return err
	}
	if q.done != nil {
		// The connection is ending: rpc.Conn drops what it has not sent
		// yet, and so do we, so the Abort waits for one write at most.
		t.dropQueue(errClosed)
	}
	n := size
	q.user = t.user
	o.hold()
	t.unsent += n
	q.user.addUnsent(int64(n))
	t.server.addUnsent(int64(n))
	t.queue = append(t.queue, q)
	t.queueCond.Signal()
	t.mu.Unlock()
	if q.done != nil {
		return <-q.done
	}
	return nil
}

// write is the writer goroutine.
func (t *Transport) write() {
	for {
		t.mu.Lock()
		for len(t.queue) == 0 && !t.closed {
			t.queueCond.Wait()
		}
		if t.closed {
			t.mu.Unlock()
			return
		}
		q := t.queue[0] // charged until written: dropQueue leaves it alone
		t.queue[0] = nil
		t.queue = t.queue[1:]
		t.writing = true
		t.mu.Unlock()

		err := t.codec.Encode(q.out.Message().Message())
		q.out.unhold()

		t.mu.Lock()
		t.writing = false
		t.uncharge(q)
		if q.isReturn && err == nil {
			// Settled in the same critical section that ends the write.
			// The peer may have the Return already, and send its Finish
			// and a call reusing the question id at once; the reader
			// starts no read while a write is in progress (awaitSent), so
			// it reads that call only after this, and finds the id free.
			// Settled after the unlock, the call could come first and
			// close the connection as "question N is already in use".
			t.settleLocked(q.answer, answerReturned)
		}
		if err != nil && t.writeErr == nil {
			t.writeErr = exc.WrapError("send", err)
		}
		failed := t.writeErr
		if failed != nil {
			t.dropQueue(failed)
		}
		t.readerCond.Signal() // awaitSent: the queue moved, or writing failed
		t.mu.Unlock()
		if testHookWritten != nil {
			testHookWritten()
		}
		if q.done != nil {
			q.done <- err
		}
		if failed != nil {
			t.abort(failed) // rpc.Conn ends the connection
			return
		}
	}
}

// testHookWritten, if set, runs after each write's critical section: a test
// stands for a writer goroutine descheduled there.
var testHookWritten func()

// uncharge gives back what q's bytes took. The caller holds mu.
func (t *Transport) uncharge(q *queued) {
	n := q.size
	t.unsent -= n
	q.user.addUnsent(-int64(n))
	t.server.addUnsent(-int64(n))
}

// dropQueue discards every message waiting to be written (not the one
// being written). The caller holds mu.
func (t *Transport) dropQueue(err error) {
	for _, q := range t.queue {
		t.uncharge(q)
		q.out.unhold()
		if q.done != nil {
			q.done <- err
		}
	}
	clear(t.queue)
	t.queue = t.queue[:0]
}

// awaitSent returns once every queued message has been written, or the
// connection is done: the reader reads nothing more from a peer that does
// not read what the server writes.
func (t *Transport) awaitSent() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for (len(t.queue) > 0 || t.writing) && !t.closed && t.abortErr == nil && t.writeErr == nil {
		t.readerCond.Wait()
	}
}

// outgoing is a message for the peer. rpc.Conn releases it once Send
// returns; while it waits in the send queue the release is deferred until
// the writer is done with it.
type outgoing struct {
	transport.OutgoingMessage
	t *Transport

	mu         sync.Mutex
	queued     bool // in the send queue or being written
	releaseDue bool // Release was called while queued
}

func (o *outgoing) hold() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queued = true
}

// unhold ends the queue's hold, releasing the message if rpc.Conn already
// asked to.
func (o *outgoing) unhold() {
	o.mu.Lock()
	due := o.releaseDue
	o.queued, o.releaseDue = false, false
	o.mu.Unlock()
	if due {
		o.OutgoingMessage.Release()
	}
}

func (o *outgoing) Release() {
	o.mu.Lock()
	if o.queued {
		o.releaseDue = true
		o.mu.Unlock()
		return
	}
	o.mu.Unlock()
	o.OutgoingMessage.Release()
}

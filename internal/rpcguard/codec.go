package rpcguard

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"capnproto.org/go/capnp/v3"
)

func newCodec(conn net.Conn, lim Limits, budget func() Budget) *codec {
	c := &codec{
		conn:   conn,
		lim:    lim,
		budget: budget,
		reader: deadlineReader{conn: conn, messageTimeout: lim.MessageTimeout},
		enc:    capnp.NewEncoder(conn),
	}
	c.framed, _ = conn.(MessageConn)
	if c.framed == nil { // a MessageConn's messages are read through NextMessage
		c.reader.buf = bufio.NewReaderSize(conn, readBuffer)
	}
	return c
}

// codec frames messages on conn with size bounds and deadlines. Decode is
// only called from the reader goroutine; Encode may be called from both
// goroutines, so mu serializes writers.
type codec struct {
	conn   net.Conn
	framed MessageConn // conn, if its transport delimits messages itself; nil for a stream
	lim    Limits
	budget func() Budget // what the peer has earned so far
	// recv is what the peer's unfinished messages take from: its user's
	// share once it has logged in (which takes from the server's budget
	// too), the server's budget before; nil: unbounded (a Transport alone).
	recv   atomic.Pointer[recvBudget]
	reader deadlineReader

	mu  sync.Mutex
	enc *capnp.Encoder
}

// readBuffer is the read buffer of a stream connection: a small message,
// read in three parts (the segment count, the segment sizes, the body),
// takes one read from the socket rather than three, and often shares it
// with the next one (a call's Finish). A larger part is read straight into
// the message's buffer.
const readBuffer = 1 << 10

// readChunk is how much of a message body is read (and allocated) at a time:
// memory grows with the bytes that actually arrived, not with the size a
// header claims.
const readChunk = 64 << 10

// Decode reads one message in the standard stream framing. Unlike
// capnp.Decoder, which allocates the whole size a header claims before the
// body arrives, it grows the buffer as bytes come in, so a peer that claims
// a large message pays for it in bytes sent.
func (c *codec) Decode() (*capnp.Message, error) {
	if err := c.reader.awaitMessage(c.budget().IdleTimeout); err != nil {
		return nil, err
	}
	var (
		buf []byte
		err error
	)
	if c.framed != nil {
		buf, err = c.decodeFramed()
	} else {
		// The size limit is read once the message has started: a login that
		// succeeded while the reader waited lifts it for the very next message.
		buf, err = readFrame(&c.reader, func() uint64 { return c.budget().MaxMessageSize }, c.recv.Load)
	}
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("%w: %v", ErrLimit, err)
		}
		return nil, err
	}
	return capnp.Unmarshal(buf)
}

// decodeFramed reads the next message of a MessageConn, which must hold
// exactly one Cap'n Proto message in the stream framing: the transport's
// own limit on its messages is the budget's message size, and readFrame
// still refuses a header that claims more before the body arrives.
func (c *codec) decodeFramed() ([]byte, error) {
	limit := c.budget().MaxMessageSize
	r, err := c.framed.NextMessage(int64(limit))
	if err != nil {
		return nil, err
	}
	if err := c.conn.SetReadDeadline(time.Now().Add(c.lim.MessageTimeout)); err != nil {
		return nil, err
	}
	buf, err := readFrame(r, func() uint64 { return limit }, c.recv.Load)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("%w: a transport message ended inside the Cap'n Proto message it carries; send each message in one", ErrProtocol)
	}
	if err != nil {
		return nil, err
	}
	var extra [1]byte
	switch n, err := io.ReadFull(r, extra[:]); {
	case n > 0:
		return nil, fmt.Errorf("%w: a transport message holds more than the one Cap'n Proto message it may carry", ErrProtocol)
	case !errors.Is(err, io.EOF):
		return nil, err
	}
	return buf, nil
}

// readFrame reads one framed message from r, of at most the bytes limit
// returns once the message's first word has arrived. The body's bytes are
// taken from the budget recv returns as they arrive and given back once the
// message is whole. Like limit, recv is asked once the header is in, after
// a login that succeeded meanwhile (Transport.Authenticated switches the
// budget before it lifts the limit).
func readFrame(r io.Reader, limit func() uint64, recv func() *recvBudget) ([]byte, error) {
	buf := make([]byte, 8, 64)
	if _, err := io.ReadFull(r, buf[:4]); err != nil {
		return nil, err
	}
	segs := uint64(binary.LittleEndian.Uint32(buf)) + 1
	hdrLen := (4 + 4*segs + 7) &^ 7
	if max := limit(); hdrLen > max {
		return nil, fmt.Errorf("%w: message of %d segments, whose header alone is over the limit of %d bytes", ErrLimit, segs, max)
	}
	buf = slices.Grow(buf[:4], int(hdrLen)-4)[:hdrLen]
	if _, err := io.ReadFull(r, buf[4:]); err != nil { // sizes, then padding
		return nil, err
	}
	total := hdrLen
	for i := range segs {
		total += 8 * uint64(binary.LittleEndian.Uint32(buf[4+4*i:]))
	}
	if max := limit(); total > max {
		return nil, fmt.Errorf("%w: message of %d bytes; the limit is %d", ErrLimit, total, max)
	}
	budget, taken := recv(), 0
	defer func() { budget.give(taken) }()
	for uint64(len(buf)) < total {
		n := int(min(total-uint64(len(buf)), readChunk))
		if err := budget.take(n); err != nil {
			return nil, err
		}
		taken += n
		buf = slices.Grow(buf, n)
		if _, err := io.ReadFull(r, buf[len(buf):len(buf)+n]); err != nil {
			return nil, err
		}
		buf = buf[:len(buf)+n]
	}
	return buf, nil
}

// recvBudget bounds the bytes of messages still arriving: each message alone
// is within its limit, but many peers each part-way through a large one
// would add up. A Server has one for all its connections, and each user
// that has connections logged in a share of it (its parent), so that one
// user's stalled messages cannot fill the server's budget and get every
// other peer's next message refused (an outside tester did that with 33
// connections). A nil *recvBudget is no bound.
type recvBudget struct {
	max     int64
	parent  *recvBudget // also taken from; nil for the server's own
	refusal string      // why a message that would pass max is refused
	used    atomic.Int64
}

// newServerRecv returns a Server's budget of max bytes.
func newServerRecv(max uint64) *recvBudget {
	return &recvBudget{max: int64(max), refusal: fmt.Sprintf("the server is already receiving %s of unfinished messages; send this one later", mib(max))}
}

// newUserRecv returns user's share of max bytes of the server's budget.
func newUserRecv(user string, max uint64, server *recvBudget) *recvBudget {
	return &recvBudget{max: int64(max), parent: server, refusal: fmt.Sprintf("user %q already has %s of unfinished messages arriving on its connections, the per-user limit; finish those before starting another", user, mib(max))}
}

// mib formats n bytes in MiB.
func mib(n uint64) string { return fmt.Sprintf("%g MiB", float64(n)/(1<<20)) }

// take counts n more bytes arriving, from b and its parent, or from
// neither and says why.
func (b *recvBudget) take(n int) error {
	if b == nil {
		return nil
	}
	if b.used.Add(int64(n)) > b.max {
		b.used.Add(-int64(n))
		return fmt.Errorf("%w: %s", ErrLimit, b.refusal)
	}
	if err := b.parent.take(n); err != nil {
		b.used.Add(-int64(n))
		return err
	}
	return nil
}

// give returns n bytes take counted.
func (b *recvBudget) give(n int) {
	for ; b != nil; b = b.parent {
		b.used.Add(-int64(n))
	}
}

func (c *codec) Encode(m *capnp.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.conn.SetWriteDeadline(time.Now().Add(c.lim.WriteTimeout)); err != nil {
		return err
	}
	return encode(c.conn, c.enc, m)
}

// encode writes m to conn through enc, whose writer is conn: in the stream
// framing, and to a MessageConn in one Write, its transport message. (An
// Encoder writes a message's header and segments in several Writes unless
// conn can write them all at once, as a TCP connection can.)
func encode(conn net.Conn, enc *capnp.Encoder, m *capnp.Message) error {
	if _, framed := conn.(MessageConn); !framed {
		return enc.Encode(m)
	}
	buf, err := m.Marshal()
	if err != nil {
		return err
	}
	_, err = conn.Write(buf)
	return err
}

func (c *codec) Close() error { return c.conn.Close() }

// deadlineReader gives the wait for a message's first byte one deadline and
// the rest of the message another. It reads conn through buf; a message
// whose first bytes were read with the one before starts its deadline when
// they are taken from buf.
type deadlineReader struct {
	conn           net.Conn
	buf            *bufio.Reader // of conn; nil for a MessageConn
	messageTimeout time.Duration
	started        bool
}

// awaitMessage arms the idle deadline for the next message.
func (r *deadlineReader) awaitMessage(idle time.Duration) error {
	r.started = false
	return r.conn.SetReadDeadline(time.Now().Add(idle))
}

func (r *deadlineReader) Read(p []byte) (int, error) {
	n, err := r.buf.Read(p)
	if n > 0 && !r.started {
		r.started = true
		if derr := r.conn.SetReadDeadline(time.Now().Add(r.messageTimeout)); derr != nil && err == nil {
			err = derr
		}
	}
	return n, err
}

package connlimit

import "net"

// Release gives the place of nc, a connection a Listener handed out (or one
// that wraps it and says so with a NetConn method, as a *tls.Conn does),
// back to its Listener while nc stays open: nc has left the Listener's
// bounds for another's. An HTTP connection upgraded to a websocket is the
// case: from then on it is a Cap'n Proto connection, bounded with the
// others by the Cap'n Proto server, and must not keep HTTP requests out.
// Closing nc afterwards gives back nothing more. Release reports whether
// nc was a Listener's.
func Release(nc net.Conn) bool {
	c := unwrap(nc)
	if c == nil {
		return false
	}
	c.once.Do(c.release)
	return true
}

// SetIdle says whether nc, a connection a Listener handed out (or one that
// wraps it, as Release unwraps), is waiting for a request (idle) or
// serving one (as it hands them out: not idle). When a Listener is full, it
// closes the one idle longest to make room for a newcomer, so that peers
// holding connections open without sending requests cannot keep others
// out: an http.Server's ConnState says StateIdle (and StateNew) for idle,
// StateActive for not. It reports whether nc was a Listener's.
func SetIdle(nc net.Conn, idle bool) bool {
	c := unwrap(nc)
	if c == nil {
		return false
	}
	c.l.setIdle(c, idle)
	return true
}

// unwrap returns the Listener's conn under nc, or nil.
func unwrap(nc net.Conn) *conn {
	for {
		switch c := nc.(type) {
		case *conn:
			return c
		case interface{ NetConn() net.Conn }:
			nc = c.NetConn()
		default:
			return nil
		}
	}
}

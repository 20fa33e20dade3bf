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
	for {
		switch c := nc.(type) {
		case *conn:
			c.once.Do(c.release)
			return true
		case interface{ NetConn() net.Conn }:
			nc = c.NetConn()
		default:
			return false
		}
	}
}

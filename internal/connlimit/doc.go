// Package connlimit bounds the connections a net.Listener hands out: in all,
// and from one host. A connection past a bound is closed as soon as it is
// accepted, so a flood of connections that never finish a request cannot
// take every file descriptor of the process (and with them the other
// listeners' accepts, pipes and files).
//
// Host also says which addresses count as one host, for this package and for
// the Cap'n Proto listener's bound on connections that have not logged in:
// an IPv4 address, or an IPv6 /64 (one site's prefix, from which a single
// peer can pick any of 2^64 addresses).
package connlimit

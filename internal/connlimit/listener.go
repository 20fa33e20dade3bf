package connlimit

// Design: Listener counts the connections it has handed out and not seen
// closed, in all and per Host, under mu. Accept runs on the caller's
// goroutine (http.Server's accept loop); a refused connection is closed
// there, before Accept looks for the next one. A conn gives its counts back
// once, on its first Close. Under mu too, idle keeps the connections that
// are waiting for a request (SetIdle), oldest first: when the Listener is
// full, Accept closes the oldest of them to make room, outside mu (closing
// takes mu to give the place back).

import (
	"container/list"
	"net"
	"sync"
)

// Defaults of a Listener's bounds.
const (
	DefaultMax        = 1024
	DefaultMaxPerHost = 64
)

// Option configures a Listener.
type Option func(*Listener)

// WithMax bounds the connections open at once; n <= 0 means DefaultMax.
func WithMax(n int) Option {
	return func(l *Listener) {
		if n > 0 {
			l.max = n
		}
	}
}

// WithMaxPerHost bounds the connections open at once from one Host; n <= 0
// means DefaultMaxPerHost.
func WithMaxPerHost(n int) Option {
	return func(l *Listener) {
		if n > 0 {
			l.maxPerHost = n
		}
	}
}

// Listener is a net.Listener whose Accept returns only connections within
// its bounds; the others it closes at once. Safe for concurrent use.
type Listener struct {
	net.Listener
	max, maxPerHost int

	mu     sync.Mutex
	open   int
	byHost map[string]int
	idle   list.List // of *conn waiting for a request, oldest first
}

// NewListener wraps ln.
func NewListener(ln net.Listener, opts ...Option) *Listener {
	l := &Listener{Listener: ln, max: DefaultMax, maxPerHost: DefaultMaxPerHost, byHost: make(map[string]int)}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Accept returns the next connection within the bounds, closing those past
// them.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := Host(nc.RemoteAddr())
		if c := l.admit(nc, host); c != nil {
			return c, nil
		}
		nc.Close()
	}
}

// Open reports how many accepted connections are not closed yet.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// admit returns nc as a conn counted against the bounds, or nil if it is
// past them. When the Listener is full it makes room by closing the
// oldest idle connection, if there is one.
func (l *Listener) admit(nc net.Conn, host string) *conn {
	for {
		l.mu.Lock()
		if l.byHost[host] >= l.maxPerHost {
			l.mu.Unlock()
			return nil
		}
		if l.open < l.max {
			l.open++
			l.byHost[host]++
			l.mu.Unlock()
			return &conn{Conn: nc, l: l, host: host}
		}
		oldest := l.idle.Front()
		if oldest == nil {
			l.mu.Unlock()
			return nil
		}
		c := oldest.Value.(*conn)
		l.idle.Remove(oldest)
		c.idle = nil
		l.mu.Unlock()
		c.Close() // gives its place back
	}
}

// release gives c's place back.
func (l *Listener) release(c *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.idle != nil {
		l.idle.Remove(c.idle)
		c.idle = nil
	}
	l.open--
	if l.byHost[c.host]--; l.byHost[c.host] == 0 {
		delete(l.byHost, c.host)
	}
}

// setIdle moves c into or out of the connections Accept may close.
func (l *Listener) setIdle(c *conn, idle bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case c.released:
	case idle && c.idle == nil:
		c.idle = l.idle.PushBack(c)
	case !idle && c.idle != nil:
		l.idle.Remove(c.idle)
		c.idle = nil
	}
}

// conn gives its place back on its first Close. idle and released are
// guarded by its Listener's mu.
type conn struct {
	net.Conn
	l        *Listener
	host     string
	once     sync.Once
	idle     *list.Element // its place in l.idle while it waits for a request
	released bool
}

func (c *conn) release() {
	c.l.mu.Lock()
	c.released = true
	c.l.mu.Unlock()
	c.l.release(c)
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// Host is the part of addr that connections from one peer share: the IP of
// an IPv4 address (or an IPv4-mapped IPv6 one), the /64 prefix of another
// IPv6 address, or the whole address when it is not IP.
func Host(addr net.Addr) string {
	var ip net.IP
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip = a.IP
	case *net.UDPAddr:
		ip = a.IP
	default:
		host, _, err := net.SplitHostPort(addr.String())
		if err != nil {
			return addr.String()
		}
		if ip = net.ParseIP(host); ip == nil {
			return host
		}
	}
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

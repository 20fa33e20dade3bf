package connlimit

// Design: Listener counts the connections it has handed out and not seen
// closed, in all and per Host, under mu. Accept runs on the caller's
// goroutine (http.Server's accept loop); a refused connection is closed
// there, before Accept looks for the next one. A conn gives its counts back
// once, on its first Close.

import (
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
		if l.admit(host) {
			return &conn{Conn: nc, release: func() { l.release(host) }}, nil
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

func (l *Listener) admit(host string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max || l.byHost[host] >= l.maxPerHost {
		return false
	}
	l.open++
	l.byHost[host]++
	return true
}

func (l *Listener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byHost[host]--; l.byHost[host] == 0 {
		delete(l.byHost, host)
	}
}

// conn gives its place back on its first Close.
type conn struct {
	net.Conn
	once    sync.Once
	release func()
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

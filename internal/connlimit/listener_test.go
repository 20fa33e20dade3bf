package connlimit_test

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/connlimit"
)

// serveLimited accepts on a loopback listener within the bounds and keeps
// every accepted connection open; it returns the listener's address and the
// accepted connections as they come.
func serveLimited(t *testing.T, opts ...connlimit.Option) (addr string, ln *connlimit.Listener, accepted <-chan net.Conn) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = connlimit.NewListener(inner, opts...)
	t.Cleanup(func() { ln.Close() })
	ch := make(chan net.Conn, 100)
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { nc.Close() })
			ch <- nc
		}
	}()
	return ln.Addr().String(), ln, ch
}

// dialFrom connects to addr from the loopback address from (127.0.0.N).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// closedByServer reports whether the server closed nc (a read ends) rather
// than keeping it open for a second.
func closedByServer(t *testing.T, nc net.Conn) bool {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(time.Second))
	_, err := nc.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	if err == nil {
		t.Fatal("the server sent a byte on a connection nobody serves")
	}
	return true
}

// awaitAccepted waits for the listener to hand out one more connection.
func awaitAccepted(t *testing.T, accepted <-chan net.Conn) net.Conn {
	t.Helper()
	select {
	case nc := <-accepted:
		return nc
	case <-time.After(10 * time.Second):
		t.Fatal("the listener did not hand out a connection within its bounds")
		return nil
	}
}

func TestListenerClosesConnectionsPastItsBoundPerHost(t *testing.T) {
	addr, _, accepted := serveLimited(t, connlimit.WithMaxPerHost(2))
	for range 2 {
		if closedByServer(t, dialFrom(t, "127.0.0.1", addr)) {
			t.Fatal("a connection within the bound was closed")
		}
		awaitAccepted(t, accepted)
	}
	if !closedByServer(t, dialFrom(t, "127.0.0.1", addr)) {
		t.Fatal("a 3rd connection from one host was kept past the bound of 2")
	}
	// Another host has its own bound.
	if closedByServer(t, dialFrom(t, "127.0.0.2", addr)) {
		t.Fatal("a connection from a second host was closed")
	}
	awaitAccepted(t, accepted)
}

func TestListenerClosesConnectionsPastItsBoundInAllAndFreesThePlaceOnClose(t *testing.T) {
	addr, ln, accepted := serveLimited(t, connlimit.WithMax(3))
	var first net.Conn
	for i := range 3 {
		dialFrom(t, "127.0.0.1", addr)
		nc := awaitAccepted(t, accepted)
		if i == 0 {
			first = nc
		}
	}
	for _, from := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		if !closedByServer(t, dialFrom(t, from, addr)) {
			t.Fatalf("a 4th connection (from %s) was kept past the bound of 3", from)
		}
	}
	if n := ln.Open(); n != 3 {
		t.Fatalf("%d connections open, want 3", n)
	}
	first.Close()
	late := dialFrom(t, "127.0.0.4", addr)
	awaitAccepted(t, accepted)
	if closedByServer(t, late) {
		t.Fatal("a connection was refused after one of the 3 had closed")
	}
}

// A refused connection ends at once: the peer reads EOF, not a timeout.
func TestRefusedConnectionReadsEOF(t *testing.T) {
	addr, _, accepted := serveLimited(t, connlimit.WithMax(1))
	dialFrom(t, "127.0.0.1", addr)
	awaitAccepted(t, accepted)
	nc := dialFrom(t, "127.0.0.1", addr)
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("reading a refused connection: %v, want EOF", err)
	}
}

func TestHostGroupsIPv6ByItsSlash64(t *testing.T) {
	for _, c := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.7"), Port: 1}, "127.0.0.7"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:10.1.2.3"), Port: 1}, "10.1.2.3"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1"), Port: 1}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:ffff:1:2:3"), Port: 2}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:3::1"), Port: 1}, "2001:db8:1:3::/64"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 1}, "::/64"},
		{&net.UnixAddr{Name: "/tmp/sock", Net: "unix"}, "/tmp/sock"},
	} {
		if got := connlimit.Host(c.addr); got != c.want {
			t.Errorf("Host(%v) = %q, want %q", c.addr, got, c.want)
		}
	}
}

package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestNonPublicAddressesAreClassified(t *testing.T) {
	for _, a := range []string{
		"127.0.0.1", "127.255.0.1", "::1",
		"10.1.2.3", "172.16.0.1", "192.168.1.1", "fc00::1", "fd12:3456::1",
		"169.254.169.254", "fe80::1", "fe80::1%eth0",
		"0.0.0.0", "::", "0.1.2.3",
		"100.64.0.1", "100.127.255.254",
		"224.0.0.1", "239.1.1.1", "ff02::1", "ff05::2",
		"255.255.255.255", "240.0.0.1", "198.18.0.1", "192.0.0.8",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:100.64.0.1", "::ffff:0.0.0.0",
		"::127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1", "fec0::1",
	} {
		if nonPublic(netip.MustParseAddr(a)) == "" {
			t.Errorf("%s is classified as public", a)
		}
	}
	for _, a := range []string{"8.8.8.8", "1.1.1.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"} {
		if c := nonPublic(netip.MustParseAddr(a)); c != "" {
			t.Errorf("%s is classified as %s", a, c)
		}
	}
}

func TestALoopbackServerIsRefusedWithoutAllowPrivate(t *testing.T) {
	srv := newServer(t, nil)
	c := newClient(t, []Prefix{{URL: srv.URL + "/"}})
	_, err := get(c, srv.URL+"/")
	if !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("got %v, want ErrPrivateAddress", err)
	}
	if !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("the error does not name the address and why: %v", err)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("the server saw %d requests", n)
	}
}

func TestLocalhostIsRefused(t *testing.T) {
	srv := newServer(t, nil)
	url := "http://localhost:" + srv.port() + "/"
	c := newClient(t, []Prefix{{URL: url}}) // the system's resolver
	if _, err := get(c, url); !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("got %v, want ErrPrivateAddress", err)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("the server saw %d requests", n)
	}
}

func TestANameResolvingToANonPublicAddressIsRefused(t *testing.T) {
	v4 := newServer(t, nil)
	// A server on ::1 at the same port, so that a dial of ::1 would reach one.
	if l, err := net.Listen("tcp", "[::1]:"+v4.port()); err != nil {
		t.Log("no server on ::1:", err)
	} else {
		v6 := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			t.Error("the server on ::1 was reached")
		}))
		v6.Listener.Close()
		v6.Listener = l
		v6.Start()
		defer v6.Close()
	}

	for _, addr := range []string{"127.0.0.1", "::1", "::ffff:127.0.0.1", "169.254.169.254", "10.1.2.3", "100.64.0.1"} {
		t.Run(addr, func(t *testing.T) {
			url := "http://rebind.test:" + v4.port() + "/"
			// A short timeout, so that the test would fail and not hang if
			// the check were gone and the unroutable addresses were dialled.
			c := newClient(t, []Prefix{{URL: url}}, resolveTo(addr), WithTimeout(2*time.Second))
			_, err := get(c, url)
			if !errors.Is(err, ErrPrivateAddress) {
				t.Fatalf("got %v, want ErrPrivateAddress", err)
			}
			if !strings.Contains(err.Error(), "rebind.test") {
				t.Errorf("the error does not name the host: %v", err)
			}
		})
	}
	if n := v4.hits.Load(); n != 0 {
		t.Errorf("the server on 127.0.0.1 saw %d requests", n)
	}
}

func TestANameWithAnyNonPublicAddressIsRefused(t *testing.T) {
	srv := newServer(t, nil)
	url := "http://mixed.test:" + srv.port() + "/"
	// The public address comes first: checking only the address a dial
	// would try first is not enough, the next one would be tried on failure.
	c := newClient(t, []Prefix{{URL: url}}, resolveTo("192.0.2.1", "127.0.0.1"), WithTimeout(2*time.Second))
	if _, err := get(c, url); !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("got %v, want ErrPrivateAddress", err)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("the server saw %d requests", n)
	}
}

func TestTheCheckedAddressIsTheDialledAddress(t *testing.T) {
	// svc.test exists only in the test's resolver: reaching the server
	// proves the dial used the resolver's answer, and resolving once per
	// connection leaves no second answer for a rebinding name to change.
	srv := newServer(t, nil)
	var lookups atomic.Int64
	resolver := WithResolver(func(ctx context.Context, host string) ([]netip.Addr, error) {
		lookups.Add(1)
		if host != "svc.test" {
			return nil, errors.New("unknown host")
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	url := "http://svc.test:" + srv.port() + "/"
	c := newClient(t, []Prefix{{URL: url, AllowPrivate: true}}, resolver)
	resp, err := get(c, url+"x")
	if err != nil {
		t.Fatal(err)
	}
	if host := srv.requests()[0].Host; host != "svc.test:"+srv.port() {
		t.Errorf("the server saw Host %q", host)
	}
	if resp.URL != url+"x" {
		t.Errorf("Response.URL = %q", resp.URL)
	}
	if n := lookups.Load(); n != 1 {
		t.Errorf("%d lookups for one connection", n)
	}
}

func TestAConnectionForAnAllowPrivatePrefixIsNotReusedForAnotherPrefix(t *testing.T) {
	srv := newServer(t, nil)
	c := newClient(t, []Prefix{
		{URL: srv.URL + "/private/", AllowPrivate: true},
		{URL: srv.URL + "/public/"},
	})
	if _, err := get(c, srv.URL+"/private/x"); err != nil {
		t.Fatal(err)
	}
	// The connection from the first request is idle and kept alive; the
	// second request must not be sent on it.
	if _, err := get(c, srv.URL+"/public/x"); !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("got %v, want ErrPrivateAddress", err)
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want 1", n)
	}
}

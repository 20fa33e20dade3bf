package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server is an httptest server on loopback that records what reached it.
type server struct {
	*httptest.Server
	hits atomic.Int64
	mu   sync.Mutex
	seen []*http.Request
	body [][]byte // seen[i]'s body
}

func newServer(t *testing.T, handler http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen, s.body = append(s.seen, r), append(s.body, b)
		s.mu.Unlock()
		if handler != nil {
			handler(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// requests returns the requests the server saw.
func (s *server) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.seen...)
}

// port is the server's port.
func (s *server) port() string {
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	return port
}

func newClient(t *testing.T, prefixes []Prefix, opts ...Option) *Client {
	t.Helper()
	c, err := New(prefixes, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// resolveTo is a resolver that answers every name with addrs.
func resolveTo(addrs ...string) Option {
	return WithResolver(func(ctx context.Context, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	})
}

func get(c *Client, url string) (*Response, error) {
	return c.Do(context.Background(), &Request{URL: url})
}

func TestUserinfoAndFragmentAreNotSent(t *testing.T) {
	srv := newServer(t, nil)
	c := newClient(t, []Prefix{{URL: srv.URL + "/", AllowPrivate: true}})
	url := strings.Replace(srv.URL, "http://", "http://user:secret@", 1) + "/x#frag"
	resp, err := get(c, url)
	if err != nil {
		t.Fatal(err)
	}
	r := srv.requests()[0]
	if a := r.Header.Get("Authorization"); a != "" {
		t.Errorf("server saw Authorization %q from the URL's userinfo", a)
	}
	if u, p, ok := r.BasicAuth(); ok {
		t.Errorf("server saw basic auth %q:%q", u, p)
	}
	if strings.Contains(resp.URL, "secret") || strings.Contains(resp.URL, "frag") {
		t.Errorf("Response.URL %q keeps the userinfo or the fragment", resp.URL)
	}
}

func TestRedirectOutsideThePrefixesFailsTheCall(t *testing.T) {
	elsewhere := newServer(t, nil) // loopback, and under no prefix
	var srv *server
	srv = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok/other-server":
			http.Redirect(w, r, elsewhere.URL+"/ok/x", http.StatusFound)
		case "/ok/other-path":
			http.Redirect(w, r, "/admin", http.StatusFound)
		case "/ok/climbing":
			w.Header().Set("Location", "/ok/../admin")
			w.WriteHeader(http.StatusTemporaryRedirect)
		case "/ok/encoded":
			w.Header().Set("Location", "/ok/%2e%2e/admin")
			w.WriteHeader(http.StatusTemporaryRedirect)
		case "/ok/other-port-same-host":
			http.Redirect(w, r, "http://127.0.0.1:"+elsewhere.port()+"/ok/x", http.StatusMovedPermanently)
		}
	})
	c := newClient(t, []Prefix{{URL: srv.URL + "/ok/", AllowPrivate: true}})
	for _, path := range []string{"/ok/other-server", "/ok/other-path", "/ok/climbing", "/ok/encoded", "/ok/other-port-same-host"} {
		resp, err := get(c, srv.URL+path)
		if !errors.Is(err, ErrOutsidePrefixes) {
			t.Errorf("%s: got %v, %v; want ErrOutsidePrefixes", path, resp, err)
		} else if !strings.Contains(err.Error(), "redirect") {
			t.Errorf("%s: error does not say a redirect was refused: %v", path, err)
		}
	}
	for _, r := range srv.requests() {
		if !strings.HasPrefix(r.URL.Path, "/ok/") {
			t.Errorf("the server saw a request for %s, outside the prefix", r.URL.Path)
		}
	}
	if n := elsewhere.hits.Load(); n != 0 {
		t.Errorf("the server under no prefix saw %d requests", n)
	}
}

func TestRedirectToALoopbackPrefixWithoutAllowPrivateIsRefused(t *testing.T) {
	target := newServer(t, nil)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/", http.StatusFound)
	})
	c := newClient(t, []Prefix{
		{URL: srv.URL + "/", AllowPrivate: true},
		{URL: target.URL + "/"}, // configured, but not for a private address
	})
	if _, err := get(c, srv.URL+"/"); !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("got %v, want ErrPrivateAddress", err)
	}
	if n := target.hits.Load(); n != 0 {
		t.Errorf("the redirect's target saw %d requests", n)
	}
}

func TestRedirectsWithinThePrefixesAreFollowed(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok/see-other":
			http.Redirect(w, r, "/ok/final", http.StatusSeeOther)
		case "/ok/temporary":
			http.Redirect(w, r, "final", http.StatusTemporaryRedirect) // relative
		case "/ok/final":
			fmt.Fprintf(w, "%s final", r.Method)
		}
	})
	c := newClient(t, []Prefix{{URL: srv.URL + "/ok/", AllowPrivate: true}})
	for _, tc := range []struct{ path, want, finalBody string }{
		{"/ok/see-other", "GET final", ""},
		{"/ok/temporary", "POST final", "body"},
	} {
		resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL + tc.path, Body: []byte("body")})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if string(resp.Body) != tc.want || resp.URL != srv.URL+"/ok/final" {
			t.Errorf("%s: got %q at %s, want %q at %s/ok/final", tc.path, resp.Body, resp.URL, tc.want, srv.URL)
		}
		srv.mu.Lock()
		if last := srv.body[len(srv.body)-1]; string(last) != tc.finalBody {
			t.Errorf("%s: the redirected request had body %q, want %q", tc.path, last, tc.finalBody)
		}
		srv.mu.Unlock()
	}
}

func TestRedirectsAreBounded(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok/again", http.StatusFound)
	})
	c := newClient(t, []Prefix{{URL: srv.URL + "/ok/", AllowPrivate: true}}, WithMaxRedirects(3))
	if _, err := get(c, srv.URL+"/ok/"); !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("got %v, want ErrTooManyRedirects", err)
	}
	if n := srv.hits.Load(); n != 4 {
		t.Errorf("the server saw %d requests, want the first and 3 redirects", n)
	}
}

func TestCredentialsAreNotCarriedToAnotherOrigin(t *testing.T) {
	other := newServer(t, nil)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/other", http.StatusFound)
		case "/other":
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		}
	})
	c := newClient(t, []Prefix{{URL: srv.URL + "/", AllowPrivate: true}, {URL: other.URL + "/", AllowPrivate: true}})
	header := http.Header{
		"Authorization":       {"Bearer service-token"},
		"Proxy-Authorization": {"Basic eDp5"},
		"Cookie":              {"session=1"},
		"Accept":              {"text/plain"},
	}
	if _, err := c.Do(context.Background(), &Request{URL: srv.URL + "/same", Header: header}); err != nil {
		t.Fatal(err)
	}
	if got := srv.requests()[1].Header.Get("Authorization"); got != "Bearer service-token" {
		t.Errorf("a redirect to the same origin dropped Authorization (got %q)", got)
	}
	r := other.requests()[0]
	for _, h := range []string{"Authorization", "Proxy-Authorization", "Cookie"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("another origin received %s: %q", h, v)
		}
	}
	if r.Header.Get("Accept") != "text/plain" {
		t.Error("another origin did not receive the harmless Accept header")
	}
	if header.Get("Authorization") == "" {
		t.Error("Do modified the caller's header")
	}
}

func TestRequestBodyOverTheBoundIsNotSent(t *testing.T) {
	srv := newServer(t, nil)
	c := newClient(t, []Prefix{{URL: srv.URL + "/", AllowPrivate: true}}, WithMaxRequestBytes(100))
	if _, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL + "/", Body: make([]byte, 100)}); err != nil {
		t.Fatalf("a body of exactly the bound: %v", err)
	}
	_, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL + "/", Body: make([]byte, 101)})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want only the one within the bound", n)
	}
}

func TestRequestHeadersOverTheBoundAreNotSent(t *testing.T) {
	srv := newServer(t, nil)
	c := newClient(t, []Prefix{{URL: srv.URL + "/", AllowPrivate: true}})
	header := http.Header{"Accept": {strings.Repeat("a", maxHeaderBytes)}}
	if _, err := c.Do(context.Background(), &Request{URL: srv.URL + "/", Header: header}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("the server saw %d requests", n)
	}
}

func TestResponseBodyOverTheBoundFailsRatherThanTruncates(t *testing.T) {
	const max = 1000
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := max
		if strings.HasSuffix(r.URL.Path, "/over") {
			n++
		}
		if strings.HasPrefix(r.URL.Path, "/chunked") {
			w.Write(make([]byte, n/2)) // flushed without a Content-Length
			w.(http.Flusher).Flush()
			w.Write(make([]byte, n-n/2))
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(n))
		w.Write(make([]byte, n))
	})
	c := newClient(t, []Prefix{{URL: srv.URL + "/", AllowPrivate: true}}, WithMaxResponseBytes(max))
	for _, path := range []string{"/length/at", "/chunked/at"} {
		resp, err := get(c, srv.URL+path)
		if err != nil || len(resp.Body) != max {
			t.Errorf("%s: a body of exactly the bound: %v", path, err)
		}
	}
	for _, path := range []string{"/length/over", "/chunked/over"} {
		resp, err := get(c, srv.URL+path)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: got %v, %v; want ErrTooLarge", path, resp, err)
		}
	}
}

// stall answers as the path says and then blocks until the test ends, or
// for 20 s at most, so that a client without a timeout fails the test
// rather than hanging it.
func stall(t *testing.T) *server {
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/headers-then-stall" {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	return srv
}

func TestTheWholeRequestIsBoundedInTime(t *testing.T) {
	srv := stall(t)
	c := newClient(t, []Prefix{{URL: srv.URL + "/", AllowPrivate: true}}, WithTimeout(300*time.Millisecond))
	for _, path := range []string{"/never-answers", "/headers-then-stall"} {
		start := time.Now()
		_, err := get(c, srv.URL+path)
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("%s: got %v, want ErrTimeout", path, err)
		}
		// Not a speed claim: only that the call did not wait for the server.
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: returned after %v", path, d)
		}
	}
}

func TestTheCallersCancellationIsNotReportedAsATimeout(t *testing.T) {
	srv := stall(t)
	c := newClient(t, []Prefix{{URL: srv.URL + "/", AllowPrivate: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Do(ctx, &Request{URL: srv.URL + "/never-answers"})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want the caller's context.DeadlineExceeded", err)
	}
}

func TestSetCookieIsDropped(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "secret"})
		w.Header().Set("X-Kept", "yes")
	})
	c := newClient(t, []Prefix{{URL: srv.URL + "/", AllowPrivate: true}})
	resp, err := get(c, srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if v := resp.Header.Values("Set-Cookie"); len(v) != 0 {
		t.Errorf("response kept Set-Cookie %q", v)
	}
	if resp.Header.Get("X-Kept") != "yes" {
		t.Error("response lost an ordinary header")
	}
}

func TestOnlyOrdinaryMethodsAreSent(t *testing.T) {
	srv := newServer(t, nil)
	c := newClient(t, []Prefix{{URL: srv.URL + "/", AllowPrivate: true}})
	for _, m := range []string{"CONNECT", "TRACE", "get", "GET /admin HTTP/1.1\r\n"} {
		if _, err := c.Do(context.Background(), &Request{Method: m, URL: srv.URL + "/"}); !errors.Is(err, ErrMethodNotAllowed) {
			t.Errorf("%q: got %v, want ErrMethodNotAllowed", m, err)
		}
	}
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		if _, err := c.Do(context.Background(), &Request{Method: m, URL: srv.URL + "/"}); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	if n := srv.hits.Load(); n != 7 {
		t.Errorf("the server saw %d requests, want 7", n)
	}
}

func TestTheEnvironmentsProxyIsNotUsed(t *testing.T) {
	proxy := newServer(t, nil)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	srv := newServer(t, nil)
	// A name, not 127.0.0.1: net/http never proxies requests to loopback.
	url := "http://svc.test:" + srv.port() + "/"
	c := newClient(t, []Prefix{{URL: url, AllowPrivate: true}}, resolveTo("127.0.0.1"))
	if _, err := get(c, url); err != nil {
		t.Fatal(err)
	}
	// net/http reads the environment once per process, so a test that
	// ran earlier may have fixed the answer: check the configuration too.
	if c.public.Proxy != nil || c.private.Proxy != nil {
		t.Error("a Transport has a Proxy")
	}
	if proxy.hits.Load() != 0 || srv.hits.Load() != 1 {
		t.Errorf("proxy saw %d requests, server %d; want 0 and 1", proxy.hits.Load(), srv.hits.Load())
	}
}

func TestDoDoesNotModifyTheRequest(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})
	c := newClient(t, []Prefix{{URL: srv.URL + "/", AllowPrivate: true}}, WithMaxRedirects(1))
	req := &Request{Method: "POST", URL: srv.URL + "/a", Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("b")}
	_, _ = c.Do(context.Background(), req)
	if req.Method != "POST" || req.Header.Get("Content-Type") != "text/plain" || !bytes.Equal(req.Body, []byte("b")) {
		t.Errorf("request changed to %+v", req)
	}
}

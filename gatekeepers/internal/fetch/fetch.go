package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Errors that Do and Allows wrap; test for them with errors.Is.
var (
	// ErrOutsidePrefixes: the URL, or a redirect's, is under no configured prefix.
	ErrOutsidePrefixes = errors.New("URL is outside the configured prefixes")
	// ErrPrivateAddress: the host is, or resolves to, an address that is not
	// public, and the prefix that admitted the URL does not allow that.
	ErrPrivateAddress = errors.New("address is not public")
	// ErrTooLarge: the request or the response is larger than its bound.
	ErrTooLarge = errors.New("too large")
	// ErrTooManyRedirects: the response redirected more times than allowed.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrTimeout: the whole exchange, redirects included, took longer than
	// the Client's timeout.
	ErrTimeout = errors.New("timed out")
	// ErrMethodNotAllowed: the request's method is not one Do sends.
	ErrMethodNotAllowed = errors.New("method not allowed")
)

// Prefix is one URL prefix requests may go under, as the operator configured it.
type Prefix struct {
	URL          string // "https://api.example.com/v1/": scheme, host, port and a path prefix
	AllowPrivate bool   // the operator allowed this exact prefix to reach loopback/private/link-local addresses
}

// Request is one request to send. Header is sent as it is: a gatekeeper
// builds it from GadgetHeaders of the gadget's headers plus its own.
type Request struct {
	Method string // "" means GET
	URL    string
	Header http.Header
	Body   []byte
}

// Response is the final response, after redirects, read whole.
type Response struct {
	Status int
	Header http.Header // without Set-Cookie
	Body   []byte
	URL    string // final, after redirects; without userinfo or fragment
}

// Defaults of the options.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxRequestBytes  = 1 << 20
	DefaultMaxResponseBytes = 8 << 20
	DefaultMaxRedirects     = 5

	// maxHeaderBytes bounds the request's and the response's headers.
	maxHeaderBytes = 64 << 10
)

// allowedMethods are the methods Do sends. CONNECT and TRACE are left out:
// one turns the connection into a tunnel, the other echoes the request.
var allowedMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

type config struct {
	timeout          time.Duration
	maxRequestBytes  int
	maxResponseBytes int
	maxRedirects     int
	resolve          func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Option configures a Client in New.
type Option func(*config)

// WithTimeout bounds the whole of a Do: connecting, every redirect, and
// reading the response body. It must be positive; the default is 30 s.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithMaxRequestBytes bounds a request's body; the default is 1 MiB.
func WithMaxRequestBytes(n int) Option { return func(c *config) { c.maxRequestBytes = n } }

// WithMaxResponseBytes bounds a response's body; the default is 8 MiB.
func WithMaxResponseBytes(n int) Option { return func(c *config) { c.maxResponseBytes = n } }

// WithMaxRedirects bounds the redirects one Do follows; the default is 5,
// and 0 makes every redirect an error.
func WithMaxRedirects(n int) Option { return func(c *config) { c.maxRedirects = n } }

// WithResolver sets how host names are resolved; the default is
// net.DefaultResolver.LookupNetIP for "ip". Every address it returns is
// checked, and only those addresses are dialled.
func WithResolver(resolve func(ctx context.Context, host string) ([]netip.Addr, error)) Option {
	return func(c *config) { c.resolve = resolve }
}

// Client sends requests under its prefixes. It is safe for concurrent use,
// and its configuration does not change after New.
type Client struct {
	prefixes []prefix
	cfg      config
	public   *http.Transport // dials public addresses only
	private  *http.Transport // for URLs an AllowPrivate prefix admitted
}

// New returns a Client that sends requests only under prefixes.
func New(prefixes []Prefix, opts ...Option) (*Client, error) {
	cfg := config{
		timeout:          DefaultTimeout,
		maxRequestBytes:  DefaultMaxRequestBytes,
		maxResponseBytes: DefaultMaxResponseBytes,
		maxRedirects:     DefaultMaxRedirects,
		resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	switch {
	case cfg.timeout <= 0:
		return nil, fmt.Errorf("fetch: timeout %v is not positive", cfg.timeout)
	case cfg.maxRequestBytes < 0 || cfg.maxResponseBytes < 0 || cfg.maxRedirects < 0:
		return nil, errors.New("fetch: a size or redirect bound is negative")
	case cfg.resolve == nil:
		return nil, errors.New("fetch: resolver is nil")
	case len(prefixes) == 0:
		return nil, errors.New("fetch: no prefixes")
	}
	c := &Client{cfg: cfg}
	for _, p := range prefixes {
		parsed, err := parsePrefix(p)
		if err != nil {
			return nil, err
		}
		c.prefixes = append(c.prefixes, parsed)
	}
	c.public = c.transport(false)
	c.private = c.transport(true)
	return c, nil
}

func (c *Client) transport(allowPrivate bool) *http.Transport {
	d := &dialer{resolve: c.cfg.resolve, allowPrivate: allowPrivate, net: net.Dialer{Timeout: c.cfg.timeout}}
	return &http.Transport{
		Proxy:                  nil, // never the environment's proxy
		DialContext:            d.DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    c.cfg.timeout,
		DisableCompression:     true, // the body bound is on the bytes as sent
		MaxResponseHeaderBytes: maxHeaderBytes,
		IdleConnTimeout:        30 * time.Second,
	}
}

// CloseIdleConnections closes the Client's idle keep-alive connections.
func (c *Client) CloseIdleConnections() {
	c.public.CloseIdleConnections()
	c.private.CloseIdleConnections()
}

// Allows returns nil if rawURL is under one of the Client's prefixes, and an
// error wrapping ErrOutsidePrefixes that says why not otherwise. It is the
// check Do makes of the request's URL and of every redirect; it does not
// resolve the host, so an admitted URL may still fail in Do with
// ErrPrivateAddress.
func (c *Client) Allows(rawURL string) error {
	if _, err := c.admit(rawURL); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	return nil
}

// Do sends req, follows redirects that stay under the prefixes, and returns
// the final response with its body read whole. A response with any status
// is a Response; the error reports only what kept the exchange from
// completing. Neither req nor its Header is modified.
func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if !allowedMethods[method] {
		return nil, fmt.Errorf("fetch: method %s: %w", quote(method), ErrMethodNotAllowed)
	}
	if len(req.Body) > c.cfg.maxRequestBytes {
		return nil, fmt.Errorf("fetch: request body is %d bytes, more than %d: %w", len(req.Body), c.cfg.maxRequestBytes, ErrTooLarge)
	}
	if n := headerBytes(req.Header); n > maxHeaderBytes {
		return nil, fmt.Errorf("fetch: request headers are %d bytes, more than %d: %w", n, maxHeaderBytes, ErrTooLarge)
	}
	t, err := c.admit(req.URL)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.cfg.timeout,
		fmt.Errorf("the whole request took longer than %v: %w", c.cfg.timeout, ErrTimeout))
	defer cancel()

	header, body := req.Header.Clone(), req.Body
	if header == nil {
		header = http.Header{}
	}
	for redirects := 0; ; redirects++ {
		resp, err := c.roundTrip(ctx, method, t, header, body)
		if err != nil {
			return nil, failure(ctx, method, t, err)
		}
		next, isRedirect := redirectLocation(resp)
		if !isRedirect {
			return c.read(ctx, method, t, resp)
		}
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10) // so the connection can be reused
		resp.Body.Close()
		if redirects == c.cfg.maxRedirects {
			return nil, fmt.Errorf("fetch: %s %s: redirected more than %d times: %w", method, quote(t.url.String()), c.cfg.maxRedirects, ErrTooManyRedirects)
		}
		loc, err := t.url.Parse(next)
		if err != nil {
			return nil, fmt.Errorf("fetch: %s %s: %d redirect to unparseable %s: %w", method, quote(t.url.String()), resp.StatusCode, quote(next), ErrOutsidePrefixes)
		}
		nt, err := c.admit(loc.String())
		if err != nil {
			return nil, fmt.Errorf("fetch: %s %s: %d redirect refused: %w", method, quote(t.url.String()), resp.StatusCode, err)
		}
		if nt.origin != t.origin {
			for _, h := range credentialHeaders {
				header.Del(h)
			}
		}
		// As net/http and browsers do: 303, and 301 or 302 after a POST,
		// continue with a GET without the body; 307 and 308 repeat the request.
		if resp.StatusCode == http.StatusSeeOther && method != http.MethodHead ||
			(resp.StatusCode == http.StatusMovedPermanently || resp.StatusCode == http.StatusFound) && method == http.MethodPost {
			method, body = http.MethodGet, nil
			header.Del("Content-Type")
		}
		t = nt
	}
}

// roundTrip sends one request, without following a redirect, on the
// Transport that matches the prefix that admitted t.
func (c *Client) roundTrip(ctx context.Context, method string, t *target, header http.Header, body []byte) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, method, t.url.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header = header.Clone()
	transport := c.public
	if t.prefix.allowPrivate {
		transport = c.private
	}
	return transport.RoundTrip(hreq)
}

// read reads the final response's body, bounded, and filters its headers.
func (c *Client) read(ctx context.Context, method string, t *target, resp *http.Response) (*Response, error) {
	defer resp.Body.Close()
	max := c.cfg.maxResponseBytes
	if resp.ContentLength > int64(max) {
		return nil, fmt.Errorf("fetch: %s %s: response body is %d bytes, more than %d: %w", method, quote(t.url.String()), resp.ContentLength, max, ErrTooLarge)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	if err != nil {
		return nil, failure(ctx, method, t, err)
	}
	if len(body) > max {
		return nil, fmt.Errorf("fetch: %s %s: response body is more than %d bytes: %w", method, quote(t.url.String()), max, ErrTooLarge)
	}
	header := resp.Header.Clone()
	for _, h := range responseHeadersDropped {
		header.Del(h)
	}
	return &Response{Status: resp.StatusCode, Header: header, Body: body, URL: t.url.String()}, nil
}

// redirectLocation returns the Location of a redirect that is to be followed.
func redirectLocation(resp *http.Response) (string, bool) {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		loc := resp.Header.Get("Location")
		return loc, loc != ""
	}
	return "", false
}

// failure wraps an error of the exchange, reporting the timeout or the
// caller's cancellation as the cause when that is what ended it.
func failure(ctx context.Context, method string, t *target, err error) error {
	if ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	return fmt.Errorf("fetch: %s %s: %w", method, quote(t.url.String()), err)
}

func headerBytes(h http.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4 // ": " and CRLF
		}
	}
	return n
}

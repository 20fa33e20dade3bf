package fetch

// URL admission. A URL is parsed once, normalised (userinfo and fragment
// removed, default port made explicit, dot segments resolved), and the
// normalised form is both what is matched against the prefixes and what is
// sent, so the server can never see a path other than the one that was
// checked.

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// maxURLBytes bounds a URL before it is parsed.
const maxURLBytes = 8 << 10

var defaultPorts = map[string]string{"http": "80", "https": "443"}

// origin is a URL's scheme, lower-case host and explicit port.
type origin struct {
	scheme, host, port string
}

func (o origin) String() string {
	return o.scheme + "://" + net.JoinHostPort(o.host, o.port)
}

// hostPort is the origin's host and port as a URL writes it: the port is
// left out when it is the scheme's default, as a Host header usually is.
func (o origin) hostPort() string {
	if o.port == defaultPorts[o.scheme] {
		if strings.Contains(o.host, ":") {
			return "[" + o.host + "]"
		}
		return o.host
	}
	return net.JoinHostPort(o.host, o.port)
}

// prefix is a configured Prefix, parsed.
type prefix struct {
	origin
	path         string // unescaped, without a trailing slash unless it is "/"
	allowPrivate bool
}

// under reports whether the cleaned, unescaped path p is at or below the
// prefix's path at a segment boundary.
func (p *prefix) under(path string) bool {
	if p.path == "/" {
		return true
	}
	return path == p.path || strings.HasPrefix(path, p.path+"/")
}

// target is a URL that was admitted, with the prefix that admitted it.
type target struct {
	url    *url.URL // normalised: no userinfo, no fragment, explicit port
	origin origin
	prefix *prefix
}

// parseURL parses raw and normalises it, refusing what can never be admitted
// whatever the prefixes are. The returned path is cleaned and unescaped.
func parseURL(raw string) (*url.URL, origin, error) {
	if len(raw) > maxURLBytes {
		return nil, origin{}, fmt.Errorf("URL is %d bytes, more than %d", len(raw), maxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, origin{}, fmt.Errorf("URL %s does not parse", quote(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, origin{}, fmt.Errorf("scheme %s is not http or https", quote(u.Scheme))
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, origin{}, fmt.Errorf("URL %s has no host", quote(raw))
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""

	o := origin{scheme: u.Scheme, host: strings.ToLower(u.Hostname()), port: u.Port()}
	if o.port == "" {
		o.port = defaultPorts[u.Scheme]
	}
	n, err := strconv.ParseUint(o.port, 10, 16)
	if err != nil || n == 0 {
		return nil, origin{}, fmt.Errorf("port %s is not a port number", quote(o.port))
	}
	o.port = strconv.FormatUint(n, 10)
	u.Host = o.hostPort()

	escaped, err := cleanPath(u.EscapedPath())
	if err != nil {
		return nil, origin{}, err
	}
	if u.Path, err = url.PathUnescape(escaped); err != nil {
		return nil, origin{}, fmt.Errorf("path %s does not unescape", quote(escaped))
	}
	u.RawPath = escaped
	return u, o, nil
}

// cleanPath refuses the path encodings that servers disagree about and
// resolves dot segments (RFC 3986 section 5.2.4) in the escaped path p.
// Encoded dots and slashes are refused, not decoded, so the segments the
// match sees are the segments every server sees.
func cleanPath(p string) (string, error) {
	// p is as url.URL.EscapedPath returns it, which escapes a raw
	// backslash as %5C: one check refuses both forms.
	lower := strings.ToLower(p)
	for _, enc := range []string{"%2e", "%2f", "%5c"} {
		if strings.Contains(lower, enc) {
			return "", fmt.Errorf("path %s contains %s (an encoded dot, slash or backslash, or a raw backslash), which servers decode differently", quote(p), enc)
		}
	}
	if p == "" {
		return "/", nil
	}
	var out []string
	segments := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, seg := range segments {
		last := i == len(segments)-1
		// Some servers (Tomcat) drop ";params" before resolving dot
		// segments, so "..;" would climb for them; refuse it.
		if name, _, params := strings.Cut(seg, ";"); params && (name == "." || name == "..") {
			return "", fmt.Errorf("path %s contains a dot segment with parameters", quote(p))
		}
		switch seg {
		case ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, seg)
			continue
		}
		if last { // "/a/." and "/a/b/.." name a directory: keep the slash.
			out = append(out, "")
		}
	}
	return "/" + strings.Join(out, "/"), nil
}

// admit parses raw and finds the prefix that admits it. When several do, one
// with AllowPrivate is preferred: the URL is under it, and the operator
// allowed that prefix to reach private addresses.
func (c *Client) admit(raw string) (*target, error) {
	u, o, err := parseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("refused: %s: %w", err, ErrOutsidePrefixes)
	}
	var found *prefix
	sameOrigin := false
	for i := range c.prefixes {
		p := &c.prefixes[i]
		if p.origin != o {
			continue
		}
		sameOrigin = true
		if p.under(u.Path) && (found == nil || !found.allowPrivate) {
			found = p
		}
	}
	switch {
	case found != nil:
		return &target{url: u, origin: o, prefix: found}, nil
	case sameOrigin:
		return nil, fmt.Errorf("refused %s: path %s is not under a configured prefix of %s: %w",
			quote(u.String()), quote(u.Path), o, ErrOutsidePrefixes)
	default:
		return nil, fmt.Errorf("refused %s: no configured prefix has origin %s: %w",
			quote(u.String()), quote(o.String()), ErrOutsidePrefixes)
	}
}

// parsePrefix parses a configured prefix. An operator's prefix is held to
// the same rules as a request's URL, and must be written in its clean form.
func parsePrefix(p Prefix) (prefix, error) {
	u, o, err := parseURL(p.URL)
	if err != nil {
		return prefix{}, fmt.Errorf("fetch: prefix %s: %s", quote(p.URL), err)
	}
	raw, _ := url.Parse(p.URL)
	switch {
	case raw.User != nil || raw.Fragment != "" || raw.RawQuery != "" || raw.ForceQuery:
		return prefix{}, fmt.Errorf("fetch: prefix %s has userinfo, a query or a fragment", quote(p.URL))
	case raw.EscapedPath() != "" && u.EscapedPath() != raw.EscapedPath():
		return prefix{}, fmt.Errorf("fetch: prefix %s has dot segments; write it as %s", quote(p.URL), quote(u.String()))
	}
	path := u.Path
	if path != "/" {
		path = strings.TrimSuffix(path, "/")
	}
	return prefix{origin: o, path: path, allowPrivate: p.AllowPrivate}, nil
}

// CanonicalPrefix checks raw as New checks a Prefix's URL and returns its
// canonical form: lower-case host, the port only if it is not the scheme's
// default, and a path that ends in a slash ("HTTPS://Api.Example.com:443/v1"
// is "https://api.example.com/v1/"). Prefixes with the same canonical form
// admit the same URLs.
func CanonicalPrefix(raw string) (string, error) {
	p, err := parsePrefix(Prefix{URL: raw})
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: p.scheme, Host: p.hostPort(), Path: p.path}
	return strings.TrimSuffix(u.String(), "/") + "/", nil
}

// quote quotes s for an error message, cut to a length that cannot flood a
// log with an attacker's input.
func quote(s string) string {
	const max = 200
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

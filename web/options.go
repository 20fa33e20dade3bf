package web

import "time"

// DefaultHandshakeTimeout bounds a websocket handshake's answer when
// WithHandshakeTimeout does not.
const DefaultHandshakeTimeout = 10 * time.Second

// Option configures Handler.
type Option func(*config)

type config struct {
	capnp            CapnpServer
	origins          map[string]bool
	handshakeTimeout time.Duration
}

func newConfig(opts []Option) config {
	c := config{origins: make(map[string]bool), handshakeTimeout: DefaultHandshakeTimeout}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithCapnp serves Cap'n Proto over websocket with s: /ws bootstraps the
// Gateway, as a TCP connection does, and /ws/frame?ticket=… the gadget
// session a frame ticket is for. Without it those paths are not served.
func WithCapnp(s CapnpServer) Option {
	return func(c *config) { c.capnp = s }
}

// WithAllowedOrigins lets pages from origins (each as ParseOrigin accepts
// it, say "https://gadgets.example.com") open websockets, besides the
// server's own pages. A string ParseOrigin refuses allows nothing.
func WithAllowedOrigins(origins ...string) Option {
	return func(c *config) {
		for _, o := range origins {
			if canonical, err := ParseOrigin(o); err == nil {
				c.origins[canonical] = true
			}
		}
	}
}

// WithHandshakeTimeout bounds how long a websocket handshake's answer may
// take to write; d <= 0 means DefaultHandshakeTimeout. (The request itself
// is bounded by the http.Server's ReadHeaderTimeout.)
func WithHandshakeTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.handshakeTimeout = d
		}
	}
}

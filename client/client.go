package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"

	"github.com/gadgetd/gadgetd/schema"
)

// DefaultAddr is where a local gadgetd serves Cap'n Proto.
const DefaultAddr = "127.0.0.1:7071"

// Conn is a connection to a gadgetd server.
type Conn struct {
	rpc     *rpc.Conn
	gateway schema.Gateway
}

// TLSScheme prefixes an address that Dial reaches over TLS:
// "tls://gadgetd.example:7071".
const TLSScheme = "tls://"

// DialOption configures Dial.
type DialOption func(*dialConfig)

type dialConfig struct{ tls *tls.Config }

// WithTLSConfig sets the TLS configuration for tls:// addresses, for example
// to trust a private CA (RootCAs). nil, the default, trusts the system's
// roots. ServerName defaults to the address's host.
func WithTLSConfig(c *tls.Config) DialOption { return func(d *dialConfig) { d.tls = c } }

// Dial connects to the gadgetd Cap'n Proto endpoint at addr: host:port over
// plain TCP, or tls://host:port over TLS, in which case the handshake is
// complete (the server's certificate verified) before Dial returns. ctx
// bounds the dialing only.
func Dial(ctx context.Context, addr string, opts ...DialOption) (*Conn, error) {
	var cfg dialConfig
	for _, o := range opts {
		o(&cfg)
	}
	hostport, useTLS := strings.CutPrefix(addr, TLSScheme)
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return nil, fmt.Errorf("connecting to gadgetd at %s: %w", addr, err)
	}
	if useTLS {
		tc := tls.Client(nc, tlsConfigFor(cfg.tls, hostport))
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake with gadgetd at %s: %w", addr, err)
		}
		nc = tc
	}
	return NewConn(nc), nil
}

// tlsConfigFor returns c, or a default, with ServerName set from hostport if
// c leaves it empty.
func tlsConfigFor(c *tls.Config, hostport string) *tls.Config {
	if c == nil {
		c = &tls.Config{}
	}
	if c.ServerName != "" {
		return c
	}
	c = c.Clone()
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		c.ServerName = host
	} else {
		c.ServerName = hostport
	}
	return c
}

// NewConn runs the client over an established connection, which it owns.
func NewConn(nc net.Conn) *Conn {
	c := rpc.NewConn(rpc.NewStreamTransport(nc), nil)
	// The bootstrap question lives as long as the connection: canceling its
	// context would Finish it and break every call pipelined onto it.
	return &Conn{rpc: c, gateway: schema.Gateway(c.Bootstrap(context.Background()))}
}

// Gateway is the server's bootstrap capability, owned by the Conn.
func (c *Conn) Gateway() schema.Gateway { return c.gateway }

// Login exchanges token for the user's workspace. It does not wait: the
// workspace is a promise that calls can be pipelined onto. The workspace is
// valid until release is called.
func (c *Conn) Login(ctx context.Context, token string) (schema.Workspace, capnp.ReleaseFunc) {
	f, release := c.gateway.Login(ctx, func(p schema.Gateway_login_Params) error {
		return p.SetToken(token)
	})
	return f.Workspace(), release
}

// Close releases the gateway and closes the connection.
func (c *Conn) Close() error {
	c.gateway.Release()
	return c.rpc.Close()
}

// Done is closed when the connection ends.
func (c *Conn) Done() <-chan struct{} { return c.rpc.Done() }

// FromEnv reads where and as whom command-line clients connect:
// $GADGETD_ADDR (default DefaultAddr; tls://host:port for TLS),
// $GADGETD_TOKEN, which must be set, and $GADGETD_TLS_CA, a PEM file of
// certificates to trust for TLS instead of the system's roots (for a
// self-signed server). Pass opts to Dial.
func FromEnv() (addr, token string, opts []DialOption, err error) {
	token = os.Getenv("GADGETD_TOKEN")
	if token == "" {
		return "", "", nil, errors.New("GADGETD_TOKEN is not set (get one from `gadgetd user add NAME`, `gadgetd token new` or `gadgetd serve --dev`)")
	}
	addr = os.Getenv("GADGETD_ADDR")
	if addr == "" {
		addr = DefaultAddr
	}
	if caFile := os.Getenv("GADGETD_TLS_CA"); caFile != "" {
		if !strings.HasPrefix(addr, TLSScheme) {
			return "", "", nil, fmt.Errorf("GADGETD_TLS_CA is set but GADGETD_ADDR %q does not start with %s: refusing to send the token in the clear", addr, TLSScheme)
		}
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return "", "", nil, fmt.Errorf("GADGETD_TLS_CA: %w", err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return "", "", nil, fmt.Errorf("GADGETD_TLS_CA: %s holds no PEM certificate", caFile)
		}
		opts = append(opts, WithTLSConfig(&tls.Config{RootCAs: roots}))
	}
	return addr, token, opts, nil
}

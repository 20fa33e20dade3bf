package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

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

// Dial connects to the gadgetd Cap'n Proto endpoint at addr. ctx bounds the
// dialing only.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connecting to gadgetd at %s: %w", addr, err)
	}
	return NewConn(nc), nil
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
// $GADGETD_ADDR (default DefaultAddr) and $GADGETD_TOKEN, which must be set.
func FromEnv() (addr, token string, err error) {
	token = os.Getenv("GADGETD_TOKEN")
	if token == "" {
		return "", "", errors.New("GADGETD_TOKEN is not set (get one from `gadgetd user add NAME` or `gadgetd serve --dev`)")
	}
	addr = os.Getenv("GADGETD_ADDR")
	if addr == "" {
		addr = DefaultAddr
	}
	return addr, token, nil
}

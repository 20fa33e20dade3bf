package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
)

// loadTLSConfig returns the server TLS configuration for the PEM files
// certFile and keyFile, or nil if both are empty.
func loadTLSConfig(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("a TLS certificate and its key go together: set both --tls-cert and --tls-key (tls.cert and tls.key in --config)")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the TLS certificate and key: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// listen opens the TCP listener called name on addr, serving TLS if
// tlsConfig is set. bound, if not nil, wraps the TCP listener (under TLS, so
// that connections still in their handshake count). A plaintext listener
// reachable beyond loopback is logged at WARN: tokens would cross the
// network in the clear.
func listen(name, addr string, tlsConfig *tls.Config, logger *slog.Logger, bound func(net.Listener) net.Listener) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s listener: %w", name, err)
	}
	if bound != nil {
		ln = bound(ln)
	}
	if tlsConfig != nil {
		return tls.NewListener(ln, tlsConfig), nil
	}
	if !isLoopback(ln.Addr()) {
		logger.Warn("listening beyond loopback without TLS: tokens and all traffic cross the network in the clear; use --tls-cert and --tls-key",
			"listener", name, "addr", ln.Addr().String())
	}
	return ln, nil
}

// isLoopback reports whether only this machine can reach a listener on a.
// The unspecified address (0.0.0.0, ::) listens on every interface.
func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

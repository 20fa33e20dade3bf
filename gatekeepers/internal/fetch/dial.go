package fetch

// How the dial check works.
//
// Checking a host name and then letting the dialer resolve it again is open
// to DNS rebinding: the name can answer with a public address for the check
// and with 127.0.0.1 for the dial. So the Transport's DialContext is ours: it
// resolves the host once, with the configured resolver, classifies every
// address in the answer, refuses the dial if any of them is not public
// (unless the dialer serves AllowPrivate prefixes), and then dials the
// checked addresses as IP literals, which net.Dialer connects to without
// resolving anything. The address checked is the address connected to.
//
// Keep-alives: a Client has two Transports, one whose dialer refuses
// non-public addresses and one whose dialer allows them, and each request
// (each redirect hop, again) uses the one that matches the prefix that
// admitted its URL. A pooled connection was therefore dialled under the same
// rule as any request that reuses it: a connection made for an AllowPrivate
// prefix is never in the pool that a non-private prefix's requests draw from.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// dialer resolves, checks and dials for one of a Client's Transports.
type dialer struct {
	resolve      func(ctx context.Context, host string) ([]netip.Addr, error)
	allowPrivate bool
	net          net.Dialer
}

func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %s: %w", quote(portText), err)
	}
	addrs, err := d.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if !d.allowPrivate {
		for _, a := range addrs {
			if class := nonPublic(a); class != "" {
				via := ""
				if a.String() != host {
					via = " (host " + quote(host) + " resolves to it)"
				}
				return nil, fmt.Errorf("refusing to dial %s%s: a %s address, and the prefix does not allow private addresses: %w",
					a, via, class, ErrPrivateAddress)
			}
		}
	}
	var errs []error
	for _, a := range addrs {
		conn, err := d.net.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// lookup returns host's addresses: host itself if it is an IP literal.
func (d *dialer) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := d.resolve(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", quote(host), err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolving %s: no addresses", quote(host))
	}
	return addrs, nil
}

// reserved lists the ranges, besides those netip classifies, that are not
// public destinations. IPv4-mapped addresses are unmapped before the match.
var reserved = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved or broadcast"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"},
	{netip.MustParsePrefix("100::/64"), "discard"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64"}, // embeds any IPv4 address
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64"},
	{netip.MustParsePrefix("2002::/16"), "6to4"}, // embeds any IPv4 address
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

// nonPublic names the class of a that makes it no public destination, or
// returns "" if a is public.
func nonPublic(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	}
	for _, r := range reserved {
		if r.prefix.Contains(a.WithZone("")) {
			return r.class
		}
	}
	return ""
}

// Package fetch is the outbound HTTP client of the gatekeepers: the one way a
// gatekeeper reaches a network service on behalf of a gadget. Everything a
// gadget puts into a request (the URL, the method, the headers, the body) is
// treated as an attacker's input.
//
// A Client is built once from the operator's configured URL prefixes and
// never changes. Do guarantees, for every request and for every redirect it
// follows:
//
//   - The URL is under a configured Prefix: the same scheme (http or https),
//     host (compared case-insensitively) and port (80 and 443 implied), and a
//     path at or below the prefix's path at a segment boundary ("/v1/" admits
//     "/v1" and "/v1/x", never "/v10"). Dot segments are resolved before the
//     match and the request is sent to the resolved path; encoded dots,
//     slashes and backslashes ("%2e", "%2f", "%5c"), raw backslashes and
//     "..;"-style segments are refused outright. Allows makes exactly this
//     check.
//   - Credentials in the URL (user:pass@) are stripped and the fragment is
//     dropped; the request is sent without them.
//   - A redirect is followed only to a URL that passes the same check, at
//     most WithMaxRedirects times; a redirect elsewhere fails the call.
//     Authorization, Proxy-Authorization and Cookie headers are not carried
//     to another origin.
//   - The connection goes only to an address that is public, unless the
//     prefix that admitted the URL has AllowPrivate: loopback, RFC 1918 and
//     fc00::/7, link-local, CGNAT, multicast, unspecified, 0.0.0.0/8 and other
//     reserved ranges, and their IPv4-mapped forms, are refused. The check is
//     on the address actually dialled (see dial.go), so DNS rebinding cannot
//     get around it. Environment proxies are never used.
//   - The request body, the response body (never silently truncated) and the
//     whole exchange in time are bounded.
//   - Set-Cookie is dropped from responses, and there is no cookie jar.
//
// GadgetHeaders filters the headers a gadget asked for down to a short
// allow-list that can carry no ambient authority; the gatekeeper adds its own
// (such as a service token) after filtering.
//
// Errors wrap the exported sentinels (ErrOutsidePrefixes, ErrPrivateAddress,
// ErrTooLarge, ErrTooManyRedirects, ErrTimeout, ErrMethodNotAllowed), so a
// caller can tell them apart with errors.Is, and their messages say what was
// refused and why without echoing more than a short prefix of the input.
package fetch

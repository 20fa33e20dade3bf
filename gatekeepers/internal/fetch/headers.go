package fetch

import "net/http"

// gadgetHeaders are the request headers a gadget may set: they describe the
// representation it wants or sends and carry no authority, routing or
// connection state.
var gadgetHeaders = map[string]bool{
	"Accept":              true,
	"Accept-Language":     true,
	"Cache-Control":       true,
	"Content-Language":    true,
	"Content-Type":        true,
	"If-Match":            true,
	"If-Modified-Since":   true,
	"If-None-Match":       true,
	"If-Range":            true,
	"If-Unmodified-Since": true,
	"Range":               true,
}

// credentialHeaders carry authority; Do does not carry them to another origin.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2"}

// responseHeadersDropped are removed from every Response: no cookie reaches
// the gadget, which has no business holding a session the gatekeeper opened.
var responseHeadersDropped = []string{"Set-Cookie", "Set-Cookie2"}

// GadgetHeaders returns the headers of h a gadget may set, in canonical form
// and copied; every other header, such as Authorization, Cookie, Proxy-*,
// Host, Forwarded, X-Forwarded-* or a hop-by-hop header, is left out.
func GadgetHeaders(h http.Header) http.Header {
	out := http.Header{}
	for name, values := range h {
		if name = http.CanonicalHeaderKey(name); gadgetHeaders[name] {
			out[name] = append(out[name], values...)
		}
	}
	return out
}

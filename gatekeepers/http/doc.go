// Package http is the http gatekeeper kind: HTTP requests under one URL
// prefix, made through package fetch. Its interface is httppb.Http
// (httppb/http.capnp), which a gadget imports.
//
// # Configuration
//
//	[services.example-api]
//	kind = "http"
//	prefixes = ["https://api.example.com/v1/"]
//	allow_private = []   # exact entries of prefixes that may reach loopback or private addresses
//
// A binding's resource is one URL prefix, in the canonical form of
// fetch.CanonicalPrefix, that lies under one of the service's prefixes. The
// binding's requests go through a fetch.Client whose only prefix is that
// resource, so each request and each redirect must stay under it (scheme,
// host and port exactly, the path at a segment boundary), and a host that
// is or resolves to a loopback, private or link-local address is refused,
// on the address actually dialled, unless the resource lies under a prefix
// listed in allow_private. A URL with credentials (user:password@) is
// refused. Of the gadget's headers only fetch.GadgetHeaders are sent.
// Sizes and time are bounded by fetch's defaults (1 MiB request body, 8
// MiB response body, 30 s).
//
// The resource is checked again against the service's configuration each
// time a binding's capability is made and each time an action is applied,
// so a prefix the operator removed is reached by no binding.
//
// # Effects
//
// get and head are observations, made at once. send (POST, PUT, PATCH,
// DELETE) is an action: checked, queued with the request (the filtered
// headers, the body) as its payload, and answered with the action's id;
// Apply sends it. Reads overlay nothing: an HTTP service's state is its
// own, and nothing general can say how a queued request would change what
// a later GET returns. The service is not a gatekeepers.Reconciler: after a
// crash during Apply nothing can tell whether the server received the
// request, so the kernel marks such an action in doubt.
package http

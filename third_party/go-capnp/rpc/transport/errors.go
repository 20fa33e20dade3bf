package transport

import "capnproto.org/go/capnp/v3/exc"

var transporterr = exc.Annotator("transport")

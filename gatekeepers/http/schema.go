package http

import (
	"bytes"
	_ "embed"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/http/httppb"
)

// The compiled schema and its source, made by scripts/schema.sh (make
// schema) and checked by make schema-check.
var (
	//go:embed httppb/schema.bin
	schemaNodes []byte
	//go:embed httppb/http.capnp
	schemaSource string
)

// Schema returns the kind's schema: httppb.Http, compiled.
func Schema() gatekeepers.Schema {
	return gatekeepers.Schema{Nodes: bytes.Clone(schemaNodes), InterfaceID: httppb.Http_TypeID, Source: schemaSource}
}

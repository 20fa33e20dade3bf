package github

import (
	"bytes"
	_ "embed"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/github/githubpb"
)

// The compiled schema and its source, made by scripts/schema.sh (make
// schema) and checked by make schema-check.
var (
	//go:embed githubpb/schema.bin
	schemaNodes []byte
	//go:embed githubpb/github.capnp
	schemaSource string
)

// Schema returns the kind's schema: githubpb.GitHub, compiled.
func Schema() gatekeepers.Schema {
	return gatekeepers.Schema{Nodes: bytes.Clone(schemaNodes), InterfaceID: githubpb.GitHub_TypeID, Source: schemaSource}
}

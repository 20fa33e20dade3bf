package client

import "regexp"

// capnpPrefix matches what go-capnp puts before a server's error text: the
// schema file and method the error came through
// ("workspace.capnp:Workspace.gadgets: "), once per hop. Interface names
// start with a capital, which tells it from a compiler's "x.capnp:12: ".
var capnpPrefix = regexp.MustCompile(`[\w-]+\.capnp:[A-Z]\w*(\.\w+)+: `)

// Message is the text of err for a person: the server's words without the
// RPC plumbing around them. "workspace.capnp:Workspace.gadgets: invalid
// token" reads "invalid token".
func Message(err error) string { return capnpPrefix.ReplaceAllString(err.Error(), "") }

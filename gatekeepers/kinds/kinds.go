// Package kinds is where gatekeeper kinds are registered: the one list the
// server reads. Adding a kind is a package beside http and github (its
// schema package for gadgets, its implementation for the server) and one
// line in All; no kernel code changes.
package kinds

import (
	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/github"
	"github.com/gadgetd/gadgetd/gatekeepers/http"
)

// All returns every kind the server offers, in a fixed order.
func All() []gatekeepers.Kind {
	return []gatekeepers.Kind{
		http.Kind(),
		github.Kind(),
	}
}

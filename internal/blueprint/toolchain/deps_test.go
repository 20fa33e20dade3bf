package toolchain_test

import (
	"os/exec"
	"strings"
	"testing"
)

const (
	toolchainPkg = "github.com/gadgetd/gadgetd/internal/blueprint/toolchain"
	wasmbuildPkg = "github.com/gadgetd/gadgetd/internal/wasmbuild"
)

// links reports which of the packages pkg links in (its transitive
// dependencies, as built for this platform).
func links(t *testing.T, pkg string, which ...string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var found []string
	for _, dep := range strings.Fields(string(out)) {
		for _, w := range which {
			if dep == w {
				found = append(found, dep)
			}
		}
	}
	return found
}

// TestServerDoesNotLinkTheToolchain: the server validates blueprints
// (package blueprint) but never runs go or capnp, so it must not link the
// code that does.
func TestServerDoesNotLinkTheToolchain(t *testing.T) {
	for _, pkg := range []string{"github.com/gadgetd/gadgetd/server", "github.com/gadgetd/gadgetd/internal/blueprint"} {
		if found := links(t, pkg, toolchainPkg, wasmbuildPkg); len(found) > 0 {
			t.Errorf("%s links %v", pkg, found)
		}
	}
	// The check can fail: the command-line tool does link the toolchain
	// (blueprint build; serve --dev builds the examples).
	if found := links(t, "github.com/gadgetd/gadgetd/cmd/gadgetd", toolchainPkg); len(found) == 0 {
		t.Error("cmd/gadgetd does not link the toolchain, so this test proves nothing")
	}
}

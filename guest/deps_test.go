package guest_test

import (
	"os/exec"
	"strings"
	"testing"
)

// What the guest SDK has no use for. This is hygiene, not a sandbox bound:
// wazero confines a guest whatever it imports (docs/SECURITY.md), so these
// would only be mistakes, such as an SDK that drags the host runtime (wazero)
// into every gadget, or code that expects files and sockets it will not get.
var forbidden = map[string]string{
	"os":                            "files and environment",
	"os/exec":                       "processes",
	"net":                           "network",
	"net/http":                      "network",
	"syscall":                       "raw system calls",
	"github.com/tetratelabs/wazero": "the host runtime",
}

// TestGuestSDKLinksNoHostOnlyPackages checks every package of this module
// that a gadget links in (the SDK and what it imports from here), as built
// for the sandbox. Standard-library packages such as fmt may use os
// internally; that is theirs, inside the sandbox, and gets nothing from the
// host.
func TestGuestSDKLinksNoHostOnlyPackages(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", "github.com/gadgetd/gadgetd/guest")
	cmd.Env = append(cmd.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		if strings.HasPrefix(pkg, "github.com/tetratelabs/wazero") {
			t.Errorf("the guest SDK links in %s", pkg)
		}
		if !strings.HasPrefix(pkg, "github.com/gadgetd/gadgetd/") {
			continue
		}
		checked++
		for _, imp := range strings.Fields(imports) {
			if why, bad := forbidden[imp]; bad {
				t.Errorf("%s imports %s (%s)", pkg, imp, why)
			}
		}
	}
	if checked < 3 {
		t.Fatalf("checked only %d packages of this module; go list output was:\n%s", checked, out)
	}
}

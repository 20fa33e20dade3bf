package kinds_test

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"capnproto.org/go/capnp/v3"
	capschema "capnproto.org/go/capnp/v3/std/capnp/schema"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/kinds"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/schema"
)

// methodsOf returns the names of the methods of interface id in the
// serialized CodeGeneratorRequest nodes, its superclasses' included, and
// the ids of the interfaces they come from.
func methodsOf(t *testing.T, nodes []byte, id uint64) (names []string, from []uint64) {
	t.Helper()
	msg, err := capnp.Unmarshal(nodes)
	if err != nil {
		t.Fatal(err)
	}
	req, err := capschema.ReadRootCodeGeneratorRequest(msg)
	if err != nil {
		t.Fatal(err)
	}
	list, err := req.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[uint64]capschema.Node{}
	for i := 0; i < list.Len(); i++ {
		byID[list.At(i).Id()] = list.At(i)
	}
	var walk func(id uint64)
	walk = func(id uint64) {
		from = append(from, id)
		n, ok := byID[id]
		if !ok || n.Which() != capschema.Node_Which_interface {
			t.Fatalf("interface %#x is not in the schema", id)
		}
		methods, _ := n.Interface().Methods()
		for i := 0; i < methods.Len(); i++ {
			name, _ := methods.At(i).Name()
			names = append(names, name)
		}
		supers, _ := n.Interface().Superclasses()
		for i := 0; i < supers.Len(); i++ {
			walk(supers.At(i).Id())
		}
	}
	walk(id)
	slices.Sort(names)
	return names, from
}

func TestEveryKindDeclaresTheEffectOfEveryMethodOfItsInterface(t *testing.T) {
	all := kinds.All()
	if len(all) != 2 {
		t.Fatalf("%d kinds, want http and github", len(all))
	}
	seen := map[string]bool{}
	for _, k := range all {
		if k.Name == "" || seen[k.Name] {
			t.Errorf("kind name %q is empty or registered twice", k.Name)
		}
		seen[k.Name] = true
		if err := blueprint.CheckInterface(k.Schema.Nodes, k.Schema.InterfaceID); err != nil {
			t.Errorf("%s: %v", k.Name, err)
		}
		if !strings.Contains(k.Schema.Source, "extends(Gatekeeper.Gatekeeper)") {
			t.Errorf("%s: the schema source does not extend Gatekeeper", k.Name)
		}
		methods, from := methodsOf(t, k.Schema.Nodes, k.Schema.InterfaceID)
		if !slices.Contains(from, schema.Gatekeeper_TypeID) {
			t.Errorf("%s: the interface does not extend schema.Gatekeeper (%#x)", k.Name, uint64(schema.Gatekeeper_TypeID))
		}
		declared := slices.Sorted(maps.Keys(k.Methods))
		if !slices.Equal(methods, declared) {
			t.Errorf("%s: the interface has methods %v, the kind declares effects for %v", k.Name, methods, declared)
		}
		for m, e := range k.Methods {
			if e != gatekeepers.Observe && e != gatekeepers.Act {
				t.Errorf("%s.%s: effect %v", k.Name, m, e)
			}
		}
		if k.Methods["describe"] != gatekeepers.Observe {
			t.Errorf("%s: describe is not an observation", k.Name)
		}
		if k.NewService == nil {
			t.Errorf("%s: no NewService", k.Name)
		}
	}
}

// What a gadget imports of a kind is generated code: it must not drag in
// the implementation (fetch, githubapi) or the host's network and files.
// As in guest/deps_test.go, this checks this module's packages, as built for
// the sandbox; wazero confines a guest whatever it links.
func TestTheSchemaPackagesGadgetsImportLinkNoHostOnlyPackages(t *testing.T) {
	forbidden := []string{"net", "net/http", "os", "os/exec", "syscall", "github.com/tetratelabs/wazero"}
	for _, pkg := range []string{
		"github.com/gadgetd/gadgetd/gatekeepers/http/httppb",
		"github.com/gadgetd/gadgetd/gatekeepers/github/githubpb",
	} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", pkg)
		cmd.Env = append(cmd.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		checked := 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			p, imports, _ := strings.Cut(line, ":")
			if !strings.HasPrefix(p, "github.com/gadgetd/gadgetd/") {
				continue
			}
			checked++
			if strings.Contains(p, "/internal/") || p == "github.com/gadgetd/gadgetd/gatekeepers" {
				t.Errorf("%s links in %s, which is the server's", pkg, p)
			}
			for _, imp := range strings.Fields(imports) {
				if slices.Contains(forbidden, imp) {
					t.Errorf("%s: %s imports %s", pkg, p, imp)
				}
			}
		}
		if checked < 2 {
			t.Errorf("%s: checked only %d packages of this module:\n%s", pkg, checked, out)
		}
	}
}

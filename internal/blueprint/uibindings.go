package blueprint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// bindingsScript matches a UI's <script data-gadgetd-bindings> element,
// whose content Load replaces with the schema's JS bindings.
var bindingsScript = regexp.MustCompile(`(?s)(<script\s+data-gadgetd-bindings(?:="[^"]*")?\s*>).*?(</script>)`)

// BindingsFile is the file of a schema's JavaScript bindings, beside it:
// `gadgetd blueprint build` writes it (with node), and it is committed with
// the blueprint as its Go bindings are.
func BindingsFile(schema string) string { return schema + ".js" }

// inlineBindings puts the JS bindings of m's schema into ui wherever it has
// a <script data-gadgetd-bindings> element: a gadget's UI is one HTML
// document, and its frame runs inline scripts only. The UI's source keeps
// the element empty; a UI without one is returned as it is.
func inlineBindings(dir string, m Manifest, ui []byte) ([]byte, error) {
	if !bindingsScript.Match(ui) {
		return ui, nil
	}
	name := BindingsFile(m.Schema)
	code, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("blueprint %s: %s asks for the JavaScript bindings of %s, but %s is missing (run `gadgetd blueprint build %s` with node installed)", dir, m.UI, m.Schema, name, dir)
	}
	if err != nil {
		return nil, err
	}
	// The bindings end up inside a <script> element: a "</script" in them
	// would end it early.
	code = bytes.ReplaceAll(code, []byte("</script"), []byte(`<\/script`))
	return bindingsScript.ReplaceAllFunc(ui, func(el []byte) []byte {
		parts := bindingsScript.FindSubmatch(el)
		return bytes.Join([][]byte{parts[1], []byte("\n"), code, parts[2]}, nil)
	}), nil
}

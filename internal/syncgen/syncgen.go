// Package syncgen generates synchronous client stubs for Cap'n Proto
// interfaces, beside the bindings capnpc-go generates: for each method foo
// of an interface Bar, a method
//
//	func (c Bar) FooSync(ctx context.Context, params func(Bar_foo_Params) error) (Bar_foo_Results, capnp.ReleaseFunc, error)
//
// that makes the call and returns its results, through guest/callsync. In a
// gadget, a call on a host capability then skips go-capnp's client path
// (SendCall, an Answer, a Future): about a fifth of a guest-to-host call in
// the guest's wasm, measured. Anywhere else the stub is SendCall and a wait.
//
// The code goes to NAME.capnp.sync.go beside capnpc-go's NAME.capnp.go, in
// the same package, so a stub is a method of the generated client type. The
// Go names are capnpc-go's (v3.1.0-alpha.2 rules: nested names joined by
// "_", $Go.name, Params/Results of implicit parameter structs), computed
// from the same CodeGeneratorRequest. Streaming methods, generic interfaces
// and generic parameter types get no stub (their callers keep capnpc-go's
// client methods).
//
// `make schema` runs it as a capnp plugin (internal/cmd/capnpc-gadget);
// `gadgetd blueprint build` calls Generate directly on the schema it
// compiled.
package syncgen

import (
	"bytes"
	"fmt"
	"go/format"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"capnproto.org/go/capnp/v3"
	schema "capnproto.org/go/capnp/v3/std/capnp/schema"
	gocapnp "capnproto.org/go/capnp/v3/std/go"
)

// FileSuffix ends the name of every generated file: NAME.capnp gets
// NAME.capnp.sync.go.
const FileSuffix = ".sync.go"

// callsyncImport is the package the generated stubs call.
const callsyncImport = "github.com/gadgetd/gadgetd/guest/callsync"

// streamResultID is the id of stream.capnp's StreamResult: a method
// returning it is a streaming method.
const streamResultID = 0x995f9a3377c0b16e

// A File is one generated Go file.
type File struct {
	Name string // the schema file's name plus FileSuffix, as requested (with --src-prefix applied)
	Code []byte
}

// Generate returns the stubs of every requested file of req, a serialized
// CodeGeneratorRequest. A file with no interface method to stub gets no
// File.
func Generate(req []byte) ([]File, error) {
	msg, err := capnp.Unmarshal(req)
	if err != nil {
		return nil, fmt.Errorf("reading the CodeGeneratorRequest: %w", err)
	}
	r, err := schema.ReadRootCodeGeneratorRequest(msg)
	if err != nil {
		return nil, fmt.Errorf("reading the CodeGeneratorRequest: %w", err)
	}
	g, err := newGenerator(r)
	if err != nil {
		return nil, err
	}
	requested, err := r.RequestedFiles()
	if err != nil {
		return nil, err
	}
	var files []File
	for i := range requested.Len() {
		rf := requested.At(i)
		name, err := rf.Filename()
		if err != nil {
			return nil, err
		}
		code, err := g.file(rf.Id())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if code != nil {
			files = append(files, File{Name: name + FileSuffix, Code: code})
		}
	}
	return files, nil
}

// goType is where capnpc-go puts a node: its Go name and package.
type goType struct {
	name     string
	pkg, imp string // $Go.package and $Go.import of its file
	file     uint64
}

type generator struct {
	nodes map[uint64]schema.Node
	types map[uint64]goType
}

func newGenerator(r schema.CodeGeneratorRequest) (*generator, error) {
	list, err := r.Nodes()
	if err != nil {
		return nil, err
	}
	g := &generator{nodes: map[uint64]schema.Node{}, types: map[uint64]goType{}}
	for i := range list.Len() {
		n := list.At(i)
		g.nodes[n.Id()] = n
	}
	for _, n := range g.nodes {
		if n.Which() != schema.Node_Which_file {
			continue
		}
		pkg, imp, err := goPackage(n)
		if err != nil {
			return nil, err
		}
		file := goType{pkg: pkg, imp: imp, file: n.Id()}
		if err := g.nameNested(n, "", file); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// nameNested names n's nested nodes (and, below them, groups and implicit
// method parameter structs) as capnpc-go's resolveName does.
func (g *generator) nameNested(n schema.Node, base string, file goType) error {
	nested, err := n.NestedNodes()
	if err != nil {
		return err
	}
	for i := range nested.Len() {
		nn := nested.At(i)
		child, ok := g.nodes[nn.Id()]
		if !ok {
			continue
		}
		name, err := nn.Name()
		if err != nil {
			return err
		}
		if err := g.name(child, base, name, file); err != nil {
			return err
		}
	}
	return nil
}

func (g *generator) name(n schema.Node, base, name string, file goType) error {
	anns, err := n.Annotations()
	if err != nil {
		return err
	}
	name = rename(anns, name)
	if base == "" {
		raised := title(name)
		if n.Which() == schema.Node_Which_annotation && raised != name {
			// capnpc-go's rule for annotations whose first letter it raised.
			raised += "_"
		}
		name = raised
	} else {
		name = base + "_" + name
	}
	t := file
	t.name = name
	g.types[n.Id()] = t
	if err := g.nameNested(n, name, file); err != nil {
		return err
	}
	switch n.Which() {
	case schema.Node_Which_structNode:
		fields, err := n.StructNode().Fields()
		if err != nil {
			return err
		}
		for i := range fields.Len() {
			f := fields.At(i)
			if f.Which() != schema.Field_Which_group {
				continue
			}
			grp, ok := g.nodes[f.Group().TypeId()]
			if !ok {
				return fmt.Errorf("no node for the group %#x in %s", f.Group().TypeId(), name)
			}
			fname, err := f.Name()
			if err != nil {
				return err
			}
			fanns, err := f.Annotations()
			if err != nil {
				return err
			}
			if err := g.name(grp, name, rename(fanns, fname), file); err != nil {
				return err
			}
		}
	case schema.Node_Which_interface:
		methods, err := n.Interface().Methods()
		if err != nil {
			return err
		}
		for i := range methods.Len() {
			m := methods.At(i)
			mname, err := m.Name()
			if err != nil {
				return err
			}
			manns, err := m.Annotations()
			if err != nil {
				return err
			}
			base := name + "_" + rename(manns, mname)
			for id, suffix := range map[uint64]string{m.ParamStructType(): "Params", m.ResultStructType(): "Results"} {
				x, ok := g.nodes[id]
				if !ok {
					return fmt.Errorf("no node for the type %#x of %s.%s", id, name, mname)
				}
				if x.ScopeId() == 0 { // an implicit parameter struct
					if err := g.name(x, base, suffix, file); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// method is one stub to write.
type method struct {
	iface         schema.Node // where the method is declared
	id            int
	name, goName  string
	params, rslts schema.Node
}

// file returns the stubs of the file node id, or nil if it has none.
func (g *generator) file(id uint64) ([]byte, error) {
	f, ok := g.nodes[id]
	if !ok {
		return nil, fmt.Errorf("no node for the requested file %#x", id)
	}
	pkg, imp, err := goPackage(f)
	if err != nil {
		return nil, err
	}
	if pkg == "" {
		return nil, fmt.Errorf("no $Go.package annotation")
	}
	var ifaces []schema.Node
	for nid, t := range g.types {
		if n := g.nodes[nid]; t.file == id && n.Which() == schema.Node_Which_interface && !n.IsGeneric() {
			ifaces = append(ifaces, n)
		}
	}
	slices.SortFunc(ifaces, func(a, b schema.Node) int { return strings.Compare(g.types[a.Id()].name, g.types[b.Id()].name) })

	imports := map[string]string{} // import path -> name
	qualify := func(t goType) string {
		if t.imp == imp {
			return t.name
		}
		if _, ok := imports[t.imp]; !ok {
			imports[t.imp] = t.pkg
		}
		return imports[t.imp] + "." + t.name
	}
	var body bytes.Buffer
	for _, iface := range ifaces {
		client := g.types[iface.Id()].name
		methods, err := g.methodSet(nil, iface)
		if err != nil {
			return nil, err
		}
		taken := map[string]bool{}
		for _, m := range methods {
			taken[m.goName] = true
		}
		for _, m := range methods {
			stub := m.goName + "Sync"
			if taken[stub] {
				return nil, fmt.Errorf("%s: the stub %s.%s would clash with the client method of the same name", client, client, stub)
			}
			ifaceName, err := m.iface.DisplayName()
			if err != nil {
				return nil, err
			}
			params, results := qualify(g.types[m.params.Id()]), qualify(g.types[m.rslts.Id()])
			sz := m.params.StructNode()
			fmt.Fprintf(&body, `
// %[1]s calls %[2]s and waits for its results, which stay valid until
// release is called. On a host capability in a gadget the call skips
// go-capnp's client path (guest/callsync).
func (c %[3]s) %[1]s(ctx context.Context, params func(%[4]s) error) (%[5]s, capnp.ReleaseFunc, error) {
	s := capnp.Send{
		Method: capnp.Method{
			InterfaceID:   %#[6]x,
			MethodID:      %[7]d,
			InterfaceName: %[8]q,
			MethodName:    %[9]q,
		},
	}
	if params != nil {
		s.ArgsSize = capnp.ObjectSize{DataSize: %[10]d, PointerCount: %[11]d}
		s.PlaceArgs = func(s capnp.Struct) error { return params(%[4]s(s)) }
	}
	res, release, err := callsync.Call(ctx, capnp.Client(c), s)
	return %[5]s(res), release, err
}
`, stub, m.name, client, params, results, m.iface.Id(), m.id, ifaceName, m.name,
				int(sz.DataWordCount())*8, sz.PointerCount())
		}
	}
	if body.Len() == 0 {
		return nil, nil
	}
	var out bytes.Buffer
	fileName, err := f.DisplayName()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&out, "// Code generated by capnpc-gadget (internal/syncgen) from %s. DO NOT EDIT.\n\npackage %s\n\nimport (\n", path.Base(fileName), pkg)
	fmt.Fprintf(&out, "\tcontext %q\n\n\tcapnp %q\n\tcallsync %q\n", "context", "capnproto.org/go/capnp/v3", callsyncImport)
	paths := make([]string, 0, len(imports))
	for p := range imports {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		fmt.Fprintf(&out, "\t%s %q\n", imports[p], p)
	}
	out.WriteString(")\n")
	out.Write(body.Bytes())
	code, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting the generated code: %w", err)
	}
	return code, nil
}

// methodSet appends the methods of iface and of its superclasses, in
// capnpc-go's order, skipping what gets no stub.
func (g *generator) methodSet(methods []method, iface schema.Node) ([]method, error) {
	list, err := iface.Interface().Methods()
	if err != nil {
		return nil, err
	}
	for i := range list.Len() {
		m := list.At(i)
		name, err := m.Name()
		if err != nil {
			return nil, err
		}
		anns, err := m.Annotations()
		if err != nil {
			return nil, err
		}
		params, okP := g.nodes[m.ParamStructType()]
		results, okR := g.nodes[m.ResultStructType()]
		if !okP || !okR {
			return nil, fmt.Errorf("no parameter or result type for %s", name)
		}
		generic, err := isGenericMethod(m)
		if err != nil {
			return nil, err
		}
		if m.ResultStructType() == streamResultID || generic || params.IsGeneric() || results.IsGeneric() {
			continue
		}
		if _, ok := g.types[params.Id()]; !ok {
			return nil, fmt.Errorf("no Go name for the parameters of %s", name)
		}
		if _, ok := g.types[results.Id()]; !ok {
			return nil, fmt.Errorf("no Go name for the results of %s", name)
		}
		methods = append(methods, method{iface: iface, id: i, name: name, goName: title(rename(anns, name)), params: params, rslts: results})
	}
	supers, err := iface.Interface().Superclasses()
	if err != nil {
		return nil, err
	}
	for i := range supers.Len() {
		super, ok := g.nodes[supers.At(i).Id()]
		if !ok {
			return nil, fmt.Errorf("no node for the superclass %#x", supers.At(i).Id())
		}
		if super.IsGeneric() {
			continue
		}
		if methods, err = g.methodSet(methods, super); err != nil {
			return nil, err
		}
	}
	return methods, nil
}

// isGenericMethod reports whether m has type parameters of its own or
// binds those of its parameter or result types (the compiler writes empty
// brands for methods that do not).
func isGenericMethod(m schema.Method) (bool, error) {
	implicit, err := m.ImplicitParameters()
	if err != nil {
		return false, err
	}
	if implicit.Len() > 0 {
		return true, nil
	}
	for _, brand := range []func() (schema.Brand, error){m.ParamBrand, m.ResultBrand} {
		b, err := brand()
		if err != nil {
			return false, err
		}
		scopes, err := b.Scopes()
		if err != nil {
			return false, err
		}
		if scopes.Len() > 0 {
			return true, nil
		}
	}
	return false, nil
}

// goPackage reads a file node's $Go.package and $Go.import.
func goPackage(file schema.Node) (pkg, imp string, err error) {
	anns, err := file.Annotations()
	if err != nil {
		return "", "", err
	}
	for i := range anns.Len() {
		a := anns.At(i)
		v, err := a.Value()
		if err != nil {
			return "", "", err
		}
		switch a.Id() {
		case gocapnp.Package:
			pkg, err = v.Text()
		case gocapnp.Import:
			imp, err = v.Text()
		}
		if err != nil {
			return "", "", err
		}
	}
	return pkg, imp, nil
}

// rename applies a $Go.name annotation.
func rename(anns schema.Annotation_List, name string) string {
	for i := range anns.Len() {
		a := anns.At(i)
		if a.Id() != gocapnp.Name {
			continue
		}
		if v, err := a.Value(); err == nil {
			if s, err := v.Text(); err == nil && s != "" {
				return s
			}
		}
	}
	return name
}

// title raises the first letter, as strings.Title does to an identifier.
func title(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToTitle(r)) + s[n:]
}

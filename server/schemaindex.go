package server

import (
	"fmt"
	"sync"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/schemas"
	capschema "capnproto.org/go/capnp/v3/std/capnp/schema"

	"github.com/gadgetd/gadgetd/schema"
)

// schemaIndex knows, for every interface the server serves (its own and
// every loaded blueprint's), which pointer fields of each method's results
// hold capabilities. The transport asks it about calls pipelined onto
// answers that have not returned yet: go-capnp v3.1.0-alpha.2 kills the
// process when such a queued call lands on a field that is not a capability,
// so those are refused before they are queued.
type schemaIndex struct {
	mu      sync.RWMutex
	results map[methodKey]uint64      // method -> id of its result struct
	structs map[uint64]map[uint16]ptr // struct id -> pointer index -> what it holds
}

type methodKey struct {
	iface  uint64
	method uint16
}

// ptr is what one pointer field of a struct holds.
type ptr struct {
	kind     ptrKind
	structID uint64 // for ptrStruct
}

type ptrKind int

const (
	ptrData       ptrKind = iota // text, data or list: never a capability
	ptrStruct                    // a struct, whose fields a path may follow
	ptrCapability                // an interface or a Capability
	ptrAny                       // AnyPointer: unknown until run time
)

func newSchemaIndex() *schemaIndex {
	idx := &schemaIndex{results: map[methodKey]uint64{}, structs: map[uint64]map[uint16]ptr{}}
	var reg schemas.Registry
	schema.RegisterSchema(&reg)
	for _, id := range []uint64{schema.Gateway_TypeID, schema.Guest_TypeID, schema.Gatekeeper_TypeID} {
		raw, err := reg.Find(id)
		if err == nil {
			err = idx.add(raw)
		}
		if err != nil {
			panic(fmt.Sprintf("indexing gadgetd's own schema: %v", err)) // the generated code is broken
		}
	}
	return idx
}

// add indexes a serialized CodeGeneratorRequest.
func (idx *schemaIndex) add(raw []byte) error {
	msg, err := capnp.Unmarshal(raw)
	if err != nil {
		return err
	}
	req, err := capschema.ReadRootCodeGeneratorRequest(msg)
	if err != nil {
		return err
	}
	list, err := req.Nodes()
	if err != nil {
		return err
	}
	nodes := make(map[uint64]capschema.Node, list.Len())
	for i := 0; i < list.Len(); i++ {
		nodes[list.At(i).Id()] = list.At(i)
	}
	results := map[methodKey]uint64{}
	structs := map[uint64]map[uint16]ptr{}
	for id, n := range nodes {
		switch n.Which() {
		case capschema.Node_Which_interface:
			methods, err := n.Interface().Methods()
			if err != nil {
				return err
			}
			for i := 0; i < methods.Len(); i++ {
				results[methodKey{id, uint16(i)}] = methods.At(i).ResultStructType()
			}
		case capschema.Node_Which_structNode:
			ptrs := map[uint16]ptr{}
			if err := collectPointers(nodes, n, ptrs, 0); err != nil {
				return err
			}
			structs[id] = ptrs
		}
	}
	idx.mu.Lock()
	defer idx.mu.Unlock()
	for k, v := range results {
		idx.results[k] = v
	}
	for k, v := range structs {
		idx.structs[k] = v
	}
	return nil
}

// collectPointers records the pointer fields of struct node n, including
// those of its groups, which share its layout.
func collectPointers(nodes map[uint64]capschema.Node, n capschema.Node, into map[uint16]ptr, depth int) error {
	if depth > 64 {
		return fmt.Errorf("schema node %#x: groups nested too deeply", n.Id())
	}
	fields, err := n.StructNode().Fields()
	if err != nil {
		return err
	}
	for i := 0; i < fields.Len(); i++ {
		f := fields.At(i)
		switch f.Which() {
		case capschema.Field_Which_group:
			if g, ok := nodes[f.Group().TypeId()]; ok {
				if err := collectPointers(nodes, g, into, depth+1); err != nil {
					return err
				}
			}
		case capschema.Field_Which_slot:
			t, err := f.Slot().Type()
			if err != nil {
				return err
			}
			p, isPointer := pointerOf(t)
			if isPointer {
				into[uint16(f.Slot().Offset())] = p
			}
		}
	}
	return nil
}

func pointerOf(t capschema.Type) (ptr, bool) {
	switch t.Which() {
	case capschema.Type_Which_text, capschema.Type_Which_data, capschema.Type_Which_list:
		return ptr{kind: ptrData}, true
	case capschema.Type_Which_structType:
		return ptr{kind: ptrStruct, structID: t.StructType().TypeId()}, true
	case capschema.Type_Which_interface:
		return ptr{kind: ptrCapability}, true
	case capschema.Type_Which_anyPointer:
		ap := t.AnyPointer()
		if ap.Which() == capschema.Type_anyPointer_Which_unconstrained &&
			ap.Unconstrained().Which() == capschema.Type_anyPointer_unconstrained_Which_capability {
			return ptr{kind: ptrCapability}, true
		}
		return ptr{kind: ptrAny}, true
	}
	return ptr{}, false
}

// check vets a pipeline path into the results of method of iface. Paths it
// cannot judge (an unknown interface, an AnyPointer on the way) pass.
func (idx *schemaIndex) check(iface uint64, method uint16, path []uint16) error {
	idx.mu.RLock()
	defer idx.mu.RUnlock()
	id, ok := idx.results[methodKey{iface, method}]
	if !ok {
		return nil
	}
	for i, p := range path {
		fields, ok := idx.structs[id]
		if !ok {
			return nil
		}
		f, ok := fields[p]
		switch {
		case !ok:
			return fmt.Errorf("pipelined call names pointer field %d of struct %#016x, which has no such field", p, id)
		case f.kind == ptrAny:
			return nil
		case f.kind == ptrCapability && i == len(path)-1:
			return nil
		case f.kind == ptrStruct && i < len(path)-1:
			id = f.structID
		default:
			return fmt.Errorf("pipelined call names pointer field %d of struct %#016x, which is not a capability", p, id)
		}
	}
	return fmt.Errorf("pipelined call names the results of method @%d of %#016x, which are a struct, not a capability", method, iface)
}

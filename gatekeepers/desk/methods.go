package desk

import (
	"fmt"
	"slices"
	"strings"

	"capnproto.org/go/capnp/v3"
	capschema "capnproto.org/go/capnp/v3/std/capnp/schema"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

// methodKey names a method as calls carry it: its interface and ordinal.
type methodKey struct {
	iface uint64
	id    uint16
}

// declared is one method of a kind, as the audit log names it, with the
// effect its kind declared for it.
type declared struct {
	name   string
	effect gatekeepers.Effect
}

// methodsOf reads every method of k's interface and of the interfaces it
// extends from k's compiled schema, with the effect k declares for each.
// Every method must have one, and every declaration must name a method, so
// that what a call does to the world is never guessed.
func methodsOf(k gatekeepers.Kind) (map[methodKey]declared, error) {
	msg, err := capnp.Unmarshal(k.Schema.Nodes)
	if err != nil {
		return nil, fmt.Errorf("kind %q: schema: %w", k.Name, err)
	}
	req, err := capschema.ReadRootCodeGeneratorRequest(msg)
	if err != nil {
		return nil, fmt.Errorf("kind %q: schema: %w", k.Name, err)
	}
	list, err := req.Nodes()
	if err != nil {
		return nil, fmt.Errorf("kind %q: schema: %w", k.Name, err)
	}
	nodes := make(map[uint64]capschema.Node, list.Len())
	for i := 0; i < list.Len(); i++ {
		nodes[list.At(i).Id()] = list.At(i)
	}
	out := make(map[methodKey]declared)
	names := make(map[string]bool)
	var walk func(id uint64) error
	walk = func(id uint64) error {
		n, ok := nodes[id]
		if !ok || n.Which() != capschema.Node_Which_interface {
			return fmt.Errorf("kind %q: interface %#x is not in its schema", k.Name, id)
		}
		methods, err := n.Interface().Methods()
		if err != nil {
			return err
		}
		for i := 0; i < methods.Len(); i++ {
			name, err := methods.At(i).Name()
			if err != nil {
				return err
			}
			if names[name] {
				return fmt.Errorf("kind %q: two methods are named %q", k.Name, name)
			}
			names[name] = true
			effect, ok := k.Methods[name]
			if !ok || (effect != gatekeepers.Observe && effect != gatekeepers.Act) {
				return fmt.Errorf("kind %q: method %q has no declared effect (Observe or Act)", k.Name, name)
			}
			// Methods are listed in ordinal order.
			out[methodKey{id, uint16(i)}] = declared{name, effect}
		}
		supers, err := n.Interface().Superclasses()
		if err != nil {
			return err
		}
		for i := 0; i < supers.Len(); i++ {
			if err := walk(supers.At(i).Id()); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(k.Schema.InterfaceID); err != nil {
		return nil, err
	}
	var extra []string
	for name := range k.Methods {
		if !names[name] {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return nil, fmt.Errorf("kind %q declares effects for methods its interface does not have: %s", k.Name, strings.Join(extra, ", "))
	}
	return out, nil
}

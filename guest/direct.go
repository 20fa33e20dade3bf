package guest

// Direct dispatch: a call delivered to an object made with the generated
// Foo_ServerToClient runs the generated method on the delivering goroutine,
// instead of going through go-capnp's server.Server.
//
// Why: server.Server queues every call to a goroutine of its own and the
// caller waits on a channel. In a wasm guest a goroutine switch unwinds and
// rewinds the whole wasm stack, and with wazero's termination checks on
// (which stay on: they are what stops a spinning guest) that switch, the
// answer queue and the client bookkeeping around it were the larger part
// of a warm call. The guest is single-threaded and the host delivers one
// call at a time, so the queue protects nothing here; running the method
// in place also lets a method's own callbacks re-enter its object without
// call.Go.
//
// How, without changing go-capnp or the interfaces authors implement
// (Foo_Server, whose methods take Foo_bar{*server.Call}): go-capnp offers
// no way to reach a server's method table from a capnp.Client, nor to build
// a server.Call outside its queue. This file does both through the layout
// of go-capnp v3.1.0-alpha.2's types, which gadgets build against (the
// blueprint template pins it, and this module's third_party copy leaves
// these types as they are). Every step checks the types it relies on, by
// name, type and offset, once; if any check fails (another go-capnp
// version), or the object is not a plain server.Server (a promise, an
// error client, a server with HandleUnknownMethod), the call takes the
// queued path, which is slower but means the same. TestDirectDispatchIsUsed
// fails if the checks stop passing, so an upgrade cannot silently lose the
// fast path.

import (
	"context"
	"reflect"
	"slices"
	"unsafe"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/server"
)

// callLayout mirrors server.Call field for field; directCallOK says the
// mirror matches (checked at init).
type callLayout struct {
	ctx     context.Context
	method  *server.Method
	recv    capnp.Recv
	aq      *capnp.AnswerQueue
	srv     *server.Server
	alloced bool
	results capnp.Struct
	acked   bool
}

var directCallOK = sameLayout(reflect.TypeFor[server.Call](), reflect.TypeFor[callLayout]())

// sameLayout reports whether a and b have the same fields: names, types,
// offsets, and size.
func sameLayout(a, b reflect.Type) bool {
	if a.Kind() != reflect.Struct || b.Kind() != reflect.Struct ||
		a.Size() != b.Size() || a.NumField() != b.NumField() {
		return false
	}
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Type != fb.Type || fa.Offset != fb.Offset {
			return false
		}
	}
	return true
}

// newCall returns a server.Call for one direct call: Args and AllocResults
// work as on go-capnp's queue, and Go does nothing (acked: there is no queue
// to unblock).
func newCall(ctx context.Context, m *server.Method, r capnp.Recv) *server.Call {
	return (*server.Call)(unsafe.Pointer(&callLayout{ctx: ctx, method: m, recv: r, acked: true}))
}

// serverMethods returns the method table of c's server.Server, sorted as
// server.New sorts it, or ok false if c is anything else or its layout is
// not the one checked for.
func serverMethods(c capnp.Client) (methods []server.Method, ok bool) {
	if !directCallOK {
		return nil, false
	}
	snap := c.Snapshot()
	defer snap.Release()
	if !snap.IsValid() || snap.IsPromise() {
		return nil, false
	}
	// ClientSnapshot.hook (*rc.Ref[clientHook]) → Ref.cell → cell.value
	// (clientHook) → its embedded ClientHook.
	v := reflect.ValueOf(&snap).Elem()
	for _, name := range []string{"hook", "cell", "value"} {
		v = field(v, name)
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return nil, false
			}
			v = v.Elem()
		}
	}
	v = field(v, "ClientHook")
	if v.Kind() != reflect.Interface || v.IsNil() || v.Elem().Type() != reflect.TypeFor[*server.Server]() {
		return nil, false
	}
	srv := (*server.Server)(v.Elem().UnsafePointer())
	if srv.HandleUnknownMethod != nil {
		return nil, false
	}
	m := field(reflect.ValueOf(srv).Elem(), "methods")
	if m.Kind() != reflect.Slice || m.Type().Elem() != reflect.TypeFor[server.Method]() {
		return nil, false
	}
	// The server never changes its table after New; the copy keeps its
	// order (by interface, then method).
	return slices.Clone(unsafe.Slice((*server.Method)(m.UnsafePointer()), m.Len())), true
}

// field returns v's field name, or the zero Value if v is not a struct
// with such a field.
func field(v reflect.Value, name string) reflect.Value {
	if v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.FieldByName(name)
}

// findMethod looks m up in a table sorted by (interface, method).
func findMethod(methods []server.Method, m capnp.Method) *server.Method {
	i, found := slices.BinarySearchFunc(methods, m, func(sm server.Method, m capnp.Method) int {
		if sm.InterfaceID != m.InterfaceID {
			if sm.InterfaceID < m.InterfaceID {
				return -1
			}
			return 1
		}
		return int(sm.MethodID) - int(m.MethodID)
	})
	if !found {
		return nil
	}
	return &methods[i]
}

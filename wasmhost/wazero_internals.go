package wasmhost

import (
	"reflect"
	"unsafe"

	"github.com/tetratelabs/wazero/api"
)

// Host memory that wazero v1.12 holds for an instance outside its linear
// memory, read by reflection because wazero has no API for it. Where the
// layout differs (another engine or version) these read zero;
// TestWazeroInternalsAreMeasured fails then.

// nativeStackBytes is the native stack of fn's call engine. wazero's
// compiler gives each api.Function its own stack, 10 KiB at first, which
// doubles when a call needs more, up to about 100 MiB, and keeps it for the
// function's life: one deep recursion, and the instance holds it for as
// long as it lives.
func nativeStackBytes(fn api.Function) uint64 {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return 0
	}
	stack := v.Elem().FieldByName("stack")
	if !stack.IsValid() || stack.Kind() != reflect.Slice {
		return 0
	}
	return uint64(stack.Cap())
}

// tableBytes is the memory of mod's tables: one reference per entry.
func tableBytes(mod api.Module) uint64 {
	v := reflect.ValueOf(mod)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return 0
	}
	tables := v.Elem().FieldByName("Tables")
	if !tables.IsValid() || tables.Kind() != reflect.Slice {
		return 0
	}
	var n uint64
	for i := range tables.Len() {
		t := tables.Index(i)
		if t.Kind() != reflect.Pointer || t.IsNil() {
			continue
		}
		if refs := t.Elem().FieldByName("References"); refs.IsValid() && refs.Kind() == reflect.Slice {
			n += uint64(refs.Cap()) * uint64(unsafe.Sizeof(uintptr(0)))
		}
	}
	return n
}

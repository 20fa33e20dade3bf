package storage_test

import (
	"context"
	"testing"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/storage"
	"github.com/gadgetd/gadgetd/schema"
)

// Serve is the in-process path to the same methods Methods serves through
// go-capnp: it must answer every Storage method, and refuse anything else
// as unimplemented, as go-capnp's server does.
func TestServeAnswersEveryStorageMethodAndNothingElse(t *testing.T) {
	d := storage.New(storage.NewMemory(), storage.Limits{})
	ctx := context.Background()
	serve := func(m capnp.Method, args capnp.Struct) (capnp.Struct, error) {
		t.Helper()
		msg, seg, err := capnp.NewMessage(capnp.SingleSegment(nil))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(msg.Release)
		return d.Serve(ctx, m, args, seg)
	}
	for _, m := range schema.Storage_Methods(nil, nil) {
		if _, err := serve(m.Method, capnp.Struct{}); capnp.IsUnimplemented(err) {
			t.Errorf("Serve does not implement %s.%s: %v", m.InterfaceName, m.MethodName, err)
		}
	}
	for _, m := range []capnp.Method{
		{InterfaceID: schema.Storage_TypeID, MethodID: uint16(len(schema.Storage_Methods(nil, nil)))},
		{InterfaceID: schema.Host_TypeID, MethodID: 0},
	} {
		if _, err := serve(m, capnp.Struct{}); !capnp.IsUnimplemented(err) {
			t.Errorf("Serve(@%d of %#x) = %v, want unimplemented", m.MethodID, m.InterfaceID, err)
		}
	}

	// A put and a get through Serve reach the data, and the get's results
	// are built in the segment it was given.
	_, seg, _ := capnp.NewMessage(capnp.SingleSegment(nil))
	put, _ := schema.NewRootStorage_put_Params(seg)
	put.SetKey("k")
	put.SetValue([]byte("v"))
	if _, err := serve(capnp.Method{InterfaceID: schema.Storage_TypeID, MethodID: 1}, capnp.Struct(put)); err != nil {
		t.Fatal(err)
	}
	_, seg, _ = capnp.NewMessage(capnp.SingleSegment(nil))
	get, _ := schema.NewRootStorage_get_Params(seg)
	get.SetKey("k")
	res, err := serve(capnp.Method{InterfaceID: schema.Storage_TypeID, MethodID: 0}, capnp.Struct(get))
	if err != nil {
		t.Fatal(err)
	}
	got := schema.Storage_get_Results(res)
	if v, _ := got.Value(); !got.Found() || string(v) != "v" {
		t.Fatalf("get through Serve = found %v, %q; want \"v\"", got.Found(), v)
	}
}

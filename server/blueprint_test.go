package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/schema"
)

// install uploads b as the command line does (client.UploadBlueprint) and
// returns the error.
func install(t testing.TB, ws schema.Workspace, b blueprint.Bundle) error {
	t.Helper()
	// Compiling a guest under -race on a busy machine can take a while.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return installWithContext(ctx, t, ws, b)
}

// installWithContext uploads and installs b until ctx ends.
func installWithContext(ctx context.Context, t testing.TB, ws schema.Workspace, b blueprint.Bundle) error {
	bundle, err := b.Marshal()
	if err != nil {
		t.Error(err)
		return err
	}
	_, release, err := client.UploadBlueprint(ctx, ws, bundle)
	if err == nil {
		release()
	}
	return err
}

func TestInstallRefusesMalformedBlueprintsWithPreciseErrors(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	good := *blueprinttest.Bundle(t, blueprinttest.TestCounter)
	good.Name = "my-counter"

	// A module that is valid wasm but exports nothing a guest must.
	emptyModule := []byte("\x00asm\x01\x00\x00\x00")

	for _, tc := range []struct {
		name   string
		change func(b *blueprint.Bundle)
		want   string
	}{
		{"not wasm", func(b *blueprint.Bundle) { b.Wasm = []byte("#!/bin/sh\necho hi\n") }, "blueprint my-counter 1.0.0: not a WebAssembly module"},
		{"wasm missing the guest exports", func(b *blueprint.Bundle) { b.Wasm = emptyModule }, `blueprint my-counter 1.0.0: guest does not export its memory as "memory"`},
		{"no wasm", func(b *blueprint.Bundle) { b.Wasm = nil }, "blueprint my-counter 1.0.0 has no wasm"},
		{"session interface not in schema", func(b *blueprint.Bundle) { b.SessionInterface = 0x1234 },
			"session interface 0x0000000000001234 is not an interface in the blueprint's schema"},
		{"session is a struct, not an interface", func(b *blueprint.Bundle) { b.SessionInterface = schema.Caller_TypeID },
			"is not an interface in the blueprint's schema"},
		{"schema is not a CodeGeneratorRequest", func(b *blueprint.Bundle) { b.SchemaNodes = []byte("not capnp") },
			"not a serialized CodeGeneratorRequest"},
		{"bad name", func(b *blueprint.Bundle) { b.Name = "My Counter!" }, `blueprint name "My Counter!" is invalid`},
		{"bad version", func(b *blueprint.Bundle) { b.Version = "" }, `blueprint version "" is invalid`},
		{"builtin name", func(b *blueprint.Bundle) { b.Name = "counter" }, `blueprint name "counter" is taken by a builtin blueprint`},
		{"oversized UI", func(b *blueprint.Bundle) { b.UIHTML = strings.Repeat("x", 3<<20) }, "blueprint ui is 3145728 bytes, over the limit of 2097152 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := good
			tc.change(&b)
			err := install(t, ws, b)
			requireErrorContains(t, err, tc.want)
		})
	}

	if err := install(t, ws, good); err != nil {
		t.Fatalf("the good bundle: %v", err)
	}
	requireErrorContains(t, install(t, ws, good), "blueprint my-counter version 1.0.0 is already installed")
	next := good
	next.Version = "1.0.1"
	if err := install(t, ws, next); err != nil {
		t.Fatalf("a new version: %v", err)
	}
	g, _ := create(t, ws, "my-counter")
	f, release := g.Info(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	info, _ := res.Info()
	if v, _ := info.BlueprintVersion(); v != "1.0.1" {
		t.Fatalf("a new gadget runs version %s, want the newest, 1.0.1", v)
	}
	// Another user does not see alice's blueprint.
	other := h.login(t, h.token("bob"))
	cf, release2 := other.Create(testCtx(t), func(p schema.Workspace_create_Params) error { return p.SetBlueprint("my-counter") })
	defer release2()
	if _, err := cf.Struct(); reason(err) != `unknown blueprint "my-counter"` {
		t.Fatalf("bob creating alice's blueprint: %v", err)
	}
}

package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// BlueprintInfo describes an installed blueprint version.
type BlueprintInfo struct {
	Name, Version, Description string
	SessionInterface           uint64
	Builtin                    bool
	Bindings                   []gatekeepers.Request // the bindings its gadgets ask for
	Access                     blueprint.Access      // its own permissions and roles
}

func infoOf(bp store.BlueprintRecord) BlueprintInfo {
	return BlueprintInfo{
		Name: bp.Name, Version: bp.Version, Description: bp.Description,
		SessionInterface: bp.SessionInterface, Builtin: bp.Owner == "", Bindings: bp.Bindings,
		Access: bp.Access,
	}
}

func fillBlueprintInfo(dst schema.BlueprintInfo, bp store.BlueprintRecord) error {
	dst.SetSessionInterface(bp.SessionInterface)
	dst.SetBuiltin(bp.Owner == "")
	if err := blueprint.FillRequests(dst.NewBindings, bp.Bindings); err != nil {
		return err
	}
	if err := blueprint.FillAccess(bp.Access, dst.NewPermissions, dst.NewRoles); err != nil {
		return err
	}
	if err := dst.SetName(bp.Name); err != nil {
		return err
	}
	if err := dst.SetVersion(bp.Version); err != nil {
		return err
	}
	return dst.SetDescription(bp.Description)
}

// compileOptions are how a blueprint of owner is compiled: a builtin (owner
// "") is the operator's code and compiles in process; a user's goes
// through the compile worker's limits.
func compileOptions(owner string) []wasmhost.CompileOption {
	if owner == "" {
		return []wasmhost.CompileOption{wasmhost.Trusted()}
	}
	return nil
}

// InstallBuiltin installs b as a builtin blueprint, offered to every user. A
// builtin of the same name and version is replaced, so `serve --dev` picks up
// edited examples on restart; gadgets already running keep the old code until
// the server restarts.
func (s *Server) InstallBuiltin(ctx context.Context, b *blueprint.Bundle) (BlueprintInfo, error) {
	bp := store.BlueprintRecord{
		Name: b.Name, Version: b.Version, Description: b.Description,
		SessionInterface: b.SessionInterface, Wasm: b.Wasm, UI: b.UIHTML,
		SchemaSource: b.SchemaSource, SchemaNodes: b.SchemaNodes, Bindings: b.Bindings,
		Access: b.Access,
	}
	installed, err := s.install(ctx, bp, true)
	if err != nil {
		return BlueprintInfo{}, err
	}
	return infoOf(installed), nil
}

// bundleFromCapnp copies an installBlueprint parameter, checking sizes before
// anything large is copied.
func (s *Server) bundleFromCapnp(in schema.Blueprint, owner string) (store.BlueprintRecord, error) {
	var bp store.BlueprintRecord
	text := func(name string, get func() (string, error), max int) (string, error) {
		v, err := get()
		if err != nil {
			return "", fmt.Errorf("blueprint %s: %w", name, err)
		}
		if len(v) > max {
			return "", fmt.Errorf("blueprint %s is %d bytes, over the limit of %d bytes", name, len(v), max)
		}
		return v, nil
	}
	data := func(name string, get func() ([]byte, error), max int) ([]byte, error) {
		v, err := get()
		if err != nil {
			return nil, fmt.Errorf("blueprint %s: %w", name, err)
		}
		if len(v) > max {
			return nil, fmt.Errorf("blueprint %s is %d bytes, over the limit of %d bytes", name, len(v), max)
		}
		return append([]byte(nil), v...), nil
	}
	var err error
	if bp.Name, err = text("name", in.Name, 64); err != nil {
		return bp, err
	}
	if bp.Version, err = text("version", in.Version, 64); err != nil {
		return bp, err
	}
	if bp.Description, err = text("description", in.Description, maxDescriptionSize); err != nil {
		return bp, err
	}
	if bp.UI, err = text("ui", in.Ui, s.cfg.maxUISize); err != nil {
		return bp, err
	}
	if bp.SchemaSource, err = text("schemaSource", in.SchemaSource, s.cfg.maxSchemaSize); err != nil {
		return bp, err
	}
	if bp.SchemaNodes, err = data("schemaNodes", in.SchemaNodes, s.cfg.maxSchemaSize); err != nil {
		return bp, err
	}
	if bp.Wasm, err = data("wasm", in.Wasm, s.cfg.maxWasmSize); err != nil {
		return bp, err
	}
	requests, err := in.Bindings()
	if err != nil {
		return bp, fmt.Errorf("blueprint bindings: %w", err)
	}
	if bp.Bindings, err = blueprint.ReadRequests(requests); err != nil {
		return bp, fmt.Errorf("blueprint bindings: %w", err)
	}
	perms, err := in.Permissions()
	if err != nil {
		return bp, fmt.Errorf("blueprint permissions: %w", err)
	}
	roles, err := in.Roles()
	if err != nil {
		return bp, fmt.Errorf("blueprint roles: %w", err)
	}
	if bp.Access, err = blueprint.ReadAccess(perms, roles); err != nil {
		return bp, fmt.Errorf("blueprint %s %s: %w", bp.Name, bp.Version, err)
	}
	bp.SessionInterface = in.SessionInterface()
	bp.Owner = owner
	return bp, nil
}

// install validates bp and stores it; the compiled module is kept for the
// gadgets that will use it.
func (s *Server) install(ctx context.Context, bp store.BlueprintRecord, replace bool) (store.BlueprintRecord, error) {
	if err := blueprint.CheckName(bp.Name); err != nil {
		return bp, err
	}
	if err := blueprint.CheckVersion(bp.Version); err != nil {
		return bp, err
	}
	if bp.Owner != "" {
		// A user's blueprint may not take a builtin's name: whoever reads
		// "counter" in a workspace must know which code that is.
		builtins, err := s.store.Blueprints(ctx, "")
		if err != nil {
			return bp, err
		}
		for _, b := range builtins {
			if b.Name == bp.Name {
				return bp, fmt.Errorf("blueprint name %q is taken by a builtin blueprint; choose another name", bp.Name)
			}
		}
		if _, err := s.store.BlueprintMeta(ctx, bp.Owner, bp.Name, bp.Version); err == nil {
			return bp, fmt.Errorf("blueprint %s version %s is already installed; give the new code a new version", bp.Name, bp.Version)
		}
	}
	if len(bp.Wasm) == 0 {
		return bp, fmt.Errorf("blueprint %s %s has no wasm", bp.Name, bp.Version)
	}
	if len(bp.SchemaNodes) == 0 {
		return bp, fmt.Errorf("blueprint %s %s has no compiled schema (schemaNodes)", bp.Name, bp.Version)
	}
	if err := blueprint.CheckInterface(bp.SchemaNodes, bp.SessionInterface); err != nil {
		return bp, fmt.Errorf("blueprint %s %s: %w", bp.Name, bp.Version, err)
	}
	// Before the compile, which a bad declaration need not wait for.
	if err := bp.Access.Check(); err != nil {
		return bp, fmt.Errorf("blueprint %s %s: %w", bp.Name, bp.Version, err)
	}
	// Compiles take turns (installqueue.go); the runtime's compile worker
	// bounds each one, and the install timeout a user's wait and compile
	// together. Builtins are the operator's code, compiled in process at
	// start, however long a busy machine takes.
	timeout := s.cfg.install.timeout
	compileCtx := ctx
	if bp.Owner != "" {
		var cancel context.CancelFunc
		compileCtx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("the install did not finish within its timeout of %v", timeout))
		defer cancel()
	}
	done, err := s.installs.acquire(compileCtx, bp.Owner)
	if err != nil {
		if ctx.Err() == nil { // our timeout, not the caller's cancel
			return bp, exc.New(exc.Overloaded, "", fmt.Sprintf("blueprint %s %s: no turn to compile within the install timeout of %v: the server is busy compiling other blueprints; try again later", bp.Name, bp.Version, timeout))
		}
		return bp, fmt.Errorf("blueprint %s %s: %w", bp.Name, bp.Version, err)
	}
	mod, err := s.rt.Compile(compileCtx, bp.Wasm, compileOptions(bp.Owner)...)
	done()
	if err != nil {
		return bp, fmt.Errorf("blueprint %s %s: %w", bp.Name, bp.Version, err)
	}
	bp.InstalledAt = time.Now().UTC()
	installed, err := s.putBlueprint(ctx, bp, replace)
	if err != nil {
		mod.Close(ctx)
		if errors.Is(err, store.ErrExists) {
			return bp, fmt.Errorf("blueprint %s version %s is already installed; give the new code a new version", bp.Name, bp.Version)
		}
		return bp, err
	}
	s.setModule(blueprintKey{bp.Owner, bp.Name, bp.Version}, mod)
	return installed, nil
}

package store_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/gadgetd/gadgetd/internal/storage"
	"github.com/gadgetd/gadgetd/internal/store"
)

func openStore(t *testing.T, path string) *store.BoltStore {
	t.Helper()
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestTokensAreStoredOnlyAsHashes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gadgetd.db")
	s := openStore(t, path)
	u, err := s.CreateUser(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	const token = "gdt_the-raw-secret-never-stored-0123456789"
	if _, err := s.AddToken(ctx, store.HashToken(token), store.Token{UserID: u.ID}, 0); err != nil {
		t.Fatal(err)
	}
	got, err := s.Token(ctx, store.HashToken(token))
	if err != nil || got.UserID != u.ID {
		t.Fatalf("Token = %v, %v; want alice's", got, err)
	}
	if _, err := s.Token(ctx, store.HashToken(token+"x")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a wrong token found %v", err)
	}
	s.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(token)) {
		t.Fatal("the raw token is in the database file")
	}
	hash := store.HashToken(token)
	if !bytes.Contains(raw, hash[:]) {
		t.Fatal("the token hash is not in the database file; the check above proves nothing")
	}
}

func TestUserNamesAreUnique(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	if _, err := s.CreateUser(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, "bob"); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second bob: %v, want ErrExists", err)
	}
}

func TestBlueprintVersionsAreKeptInInstallOrderAndNeverOverwrittenByAccident(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	for _, v := range []string{"2.0.0", "1.0.0", "10.0.0"} {
		if _, err := s.PutBlueprint(ctx, store.BlueprintRecord{Owner: "u1", Name: "notes", Version: v, Wasm: []byte("wasm-" + v)}, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutBlueprint(ctx, store.BlueprintRecord{Owner: "u1", Name: "notes", Version: "1.0.0"}, false); !errors.Is(err, store.ErrExists) {
		t.Fatalf("reinstalling 1.0.0: %v, want ErrExists", err)
	}
	list, err := s.Blueprints(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, bp := range list {
		versions = append(versions, bp.Version)
		if bp.Wasm != nil {
			t.Error("Blueprints returned bodies")
		}
	}
	if !slices.Equal(versions, []string{"2.0.0", "1.0.0", "10.0.0"}) {
		t.Fatalf("versions = %v, want install order", versions)
	}
	if others, _ := s.Blueprints(ctx, ""); len(others) != 0 {
		t.Fatalf("a user's blueprints leaked into the builtins: %v", others)
	}
	bp, err := s.Blueprint(ctx, "u1", "notes", "1.0.0")
	if err != nil || string(bp.Wasm) != "wasm-1.0.0" {
		t.Fatalf("Blueprint = %q, %v", bp.Wasm, err)
	}
	if _, err := s.PutBlueprint(ctx, store.BlueprintRecord{Owner: "", Name: "counter", Version: "1", Wasm: []byte("old")}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlueprint(ctx, store.BlueprintRecord{Owner: "", Name: "counter", Version: "1", Wasm: []byte("new")}, true); err != nil {
		t.Fatal(err)
	}
	if bp, _ := s.Blueprint(ctx, "", "counter", "1"); string(bp.Wasm) != "new" {
		t.Fatalf("replacing a builtin kept %q", bp.Wasm)
	}
}

func TestGadgetsAreListedPerOwnerAndDeletedWithTheirData(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	for _, g := range []store.GadgetRecord{{ID: "a1", OwnerID: "alice"}, {ID: "b1", OwnerID: "bob"}, {ID: "a2", OwnerID: "alice"}} {
		if err := s.CreateGadget(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateGadget(ctx, store.GadgetRecord{ID: "a1", OwnerID: "bob"}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate id: %v", err)
	}
	alice, _ := s.Gadgets(ctx, "alice")
	if len(alice) != 2 {
		t.Fatalf("alice has %v", alice)
	}
	if err := s.Commit(ctx, "a1", []storage.Write{{Key: "k", Value: []byte("v")}}, 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGadget(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Gadget(ctx, "a1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted gadget: %v", err)
	}
	if _, found, _ := s.Get(ctx, "a1", "k"); found {
		t.Fatal("a deleted gadget's data survived")
	}
	if alice, _ := s.Gadgets(ctx, "alice"); len(alice) != 1 || alice[0].ID != "a2" {
		t.Fatalf("after delete alice has %v", alice)
	}
}

func TestCommitIsAtomicAndEnforcesTheQuota(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	if err := s.Commit(ctx, "g", []storage.Write{{Key: "a", Value: []byte("12345")}, {Key: "empty", Value: nil}}, 100); err != nil {
		t.Fatal(err)
	}
	if size, _ := s.DataSize(ctx, "g"); size != 6+5 {
		t.Fatalf("size = %d, want 11", size)
	}
	err := s.Commit(ctx, "g", []storage.Write{{Key: "b", Value: []byte("x")}, {Key: "c", Value: make([]byte, 100)}}, 100)
	if !errors.Is(err, storage.ErrQuota) {
		t.Fatalf("over quota: %v", err)
	}
	if _, found, _ := s.Get(ctx, "g", "b"); found {
		t.Fatal("a failed commit applied part of its writes")
	}
	if v, found, _ := s.Get(ctx, "g", "empty"); !found || len(v) != 0 {
		t.Fatalf("empty value: %q found=%v", v, found)
	}
	// Shrinking is allowed even over the quota (an operator may lower it).
	if err := s.Commit(ctx, "g", []storage.Write{{Key: "a", Delete: true}}, 1); err != nil {
		t.Fatal(err)
	}
	if size, _ := s.DataSize(ctx, "g"); size != 5 {
		t.Fatalf("size after delete = %d, want 5", size)
	}
}

func TestStateSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, "g", []storage.Write{{Key: "count", Value: []byte("7")}}, 100); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, path)
	if v, _, _ := s.Get(ctx, "g", "count"); string(v) != "7" {
		t.Fatalf("after reopen: %q", v)
	}
}

func TestSecondOpenOfALockedStoreFailsClearly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	openStore(t, path)
	_, err := store.Open(path)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("locked by another process")) {
		t.Fatalf("second open: %v", err)
	}
}

// TestBlueprintMetaIsTheRecordWithoutItsBodies: BlueprintMeta, which the
// server reads on every session open, carries every field of the record but
// not the megabytes of wasm, UI and schema.
func TestBlueprintMetaIsTheRecordWithoutItsBodies(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	in := store.BlueprintRecord{Owner: "u1", Name: "notes", Version: "1.0.0", Description: "notes",
		Wasm: []byte("wasm"), UI: "<p>", SchemaSource: "struct", SchemaNodes: []byte("nodes")}
	if _, err := s.PutBlueprint(ctx, in, false); err != nil {
		t.Fatal(err)
	}
	full, err := s.Blueprint(ctx, "u1", "notes", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := s.BlueprintMeta(ctx, "u1", "notes", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if meta.Wasm != nil || meta.UI != "" || meta.SchemaSource != "" || meta.SchemaNodes != nil {
		t.Fatalf("BlueprintMeta returned bodies: %+v", meta)
	}
	full.Wasm, full.UI, full.SchemaSource, full.SchemaNodes = nil, "", "", nil
	if !reflect.DeepEqual(meta, full) {
		t.Fatalf("BlueprintMeta = %+v, want Blueprint's record without bodies %+v", meta, full)
	}
	if _, err := s.BlueprintMeta(ctx, "u1", "notes", "2.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("BlueprintMeta of a version never installed: %v", err)
	}
}

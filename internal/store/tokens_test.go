package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/internal/store"
)

func TestTokensAreListedAndDeletedOnlyByTheirOwnUser(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	alice, _ := s.CreateUser(ctx, "alice")
	bob, _ := s.CreateUser(ctx, "bob")
	a1, err := s.AddToken(ctx, store.HashToken("a1"), store.Token{UserID: alice.ID, Label: "laptop", CreatedAt: time.Unix(1, 0)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := s.AddToken(ctx, store.HashToken("a2"), store.Token{UserID: alice.ID, CreatedAt: time.Unix(2, 0)}, 0)
	b1, _ := s.AddToken(ctx, store.HashToken("b1"), store.Token{UserID: bob.ID}, 0)
	if a1.ID == "" || a1.ID == a2.ID {
		t.Fatalf("token ids %q and %q", a1.ID, a2.ID)
	}
	list, err := s.Tokens(ctx, alice.ID)
	if err != nil || len(list) != 2 || list[0].ID != a1.ID || list[0].Label != "laptop" || list[1].ID != a2.ID {
		t.Fatalf("alice's tokens = %+v, %v", list, err)
	}
	if err := s.DeleteToken(ctx, alice.ID, b1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("alice deleting bob's token: %v, want ErrNotFound", err)
	}
	if _, err := s.Token(ctx, store.HashToken("b1")); err != nil {
		t.Fatalf("bob's token after alice tried to delete it: %v", err)
	}
	if err := s.DeleteToken(ctx, alice.ID, a1.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Token(ctx, store.HashToken("a1")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted token still found: %v", err)
	}
	if list, _ := s.Tokens(ctx, alice.ID); len(list) != 1 || list[0].ID != a2.ID {
		t.Fatalf("alice's tokens after delete = %+v", list)
	}
}

func TestAddTokenStopsAtTheLimitPerUser(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "db"))
	alice, _ := s.CreateUser(ctx, "alice")
	bob, _ := s.CreateUser(ctx, "bob")
	for _, tok := range []string{"1", "2"} {
		if _, err := s.AddToken(ctx, store.HashToken(tok), store.Token{UserID: alice.ID}, 2); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AddToken(ctx, store.HashToken("3"), store.Token{UserID: alice.ID}, 2); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("third token: %v, want ErrLimit", err)
	}
	if _, err := s.Token(ctx, store.HashToken("3")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused token was stored: %v", err)
	}
	if _, err := s.AddToken(ctx, store.HashToken("b"), store.Token{UserID: bob.ID}, 2); err != nil {
		t.Fatalf("another user's token: %v", err)
	}
}

func TestTokensStoredBeforeTokenIDsGetIDsOnOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := s.CreateUser(ctx, "alice")
	s.Close()
	// A token record as the store wrote it before tokens had ids.
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	hash := store.HashToken("old")
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("tokens")).Put(hash[:], []byte(`{"UserID":"`+alice.ID+`","CreatedAt":"2025-01-02T03:04:05Z"}`))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path)
	list, err := s.Tokens(ctx, alice.ID)
	if err != nil || len(list) != 1 || list[0].ID == "" {
		t.Fatalf("tokens after reopen = %+v, %v", list, err)
	}
	if err := s.DeleteToken(ctx, alice.ID, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Token(ctx, hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the old token still logs in after its deletion: %v", err)
	}
}

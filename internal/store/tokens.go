package store

// Tokens live in two buckets: "tokens" maps each token's hash to its Token
// record (what login reads), and "usertokens"/userID/id maps a user's public
// token ids back to hashes (what listing and revocation read). Both change in
// one transaction, so they always agree.

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// newTokenID returns a short public handle for a token: 8 random bytes,
// lower-case base32 (13 characters). It is unrelated to the secret.
func newTokenID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather than return short)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// putToken stores t under hash and indexes it, giving it a fresh id.
func putToken(tx *bolt.Tx, hash []byte, t Token) (Token, error) {
	ids, err := tx.Bucket(bucketUserTokens).CreateBucketIfNotExists([]byte(t.UserID))
	if err != nil {
		return Token{}, err
	}
	for t.ID = newTokenID(); ids.Get([]byte(t.ID)) != nil; t.ID = newTokenID() {
	}
	if err := ids.Put([]byte(t.ID), hash); err != nil {
		return Token{}, err
	}
	return t, putJSON(tx.Bucket(bucketTokens), hash, t)
}

// indexTokensWithoutID gives an id to every token stored before tokens had
// ids, so that their users can list and revoke them.
func indexTokensWithoutID(tx *bolt.Tx) error {
	type unindexed struct {
		hash []byte
		tok  Token
	}
	var todo []unindexed
	err := tx.Bucket(bucketTokens).ForEach(func(hash, raw []byte) error {
		var t Token
		if err := json.Unmarshal(raw, &t); err != nil {
			return err
		}
		if t.ID == "" {
			todo = append(todo, unindexed{slices.Clone(hash), t})
		}
		return nil
	})
	if err != nil {
		return err
	}
	// bbolt forbids writing a bucket while iterating it.
	for _, u := range todo {
		if _, err := putToken(tx, u.hash, u.tok); err != nil {
			return err
		}
	}
	return nil
}

func (s *BoltStore) AddToken(ctx context.Context, hash TokenHash, t Token, maxPerUser int) (Token, error) {
	err := s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketUsers).Get([]byte(t.UserID)) == nil {
			return fmt.Errorf("user id %q: %w", t.UserID, ErrNotFound)
		}
		if tx.Bucket(bucketTokens).Get(hash[:]) != nil {
			return fmt.Errorf("token: %w", ErrExists)
		}
		if ids := tx.Bucket(bucketUserTokens).Bucket([]byte(t.UserID)); ids != nil && maxPerUser > 0 {
			n, c := 0, ids.Cursor()
			for k, _ := c.First(); k != nil && n < maxPerUser; k, _ = c.Next() {
				n++
			}
			if n >= maxPerUser {
				return fmt.Errorf("%w: the user has %d tokens, the most allowed", ErrLimit, n)
			}
		}
		var err error
		t, err = putToken(tx, hash[:], t)
		return err
	})
	if err != nil {
		return Token{}, err
	}
	return t, nil
}

func (s *BoltStore) Token(ctx context.Context, hash TokenHash) (Token, error) {
	var t Token
	err := s.db.View(func(tx *bolt.Tx) error { return getJSON(tx.Bucket(bucketTokens), hash[:], &t) })
	return t, err
}

func (s *BoltStore) Tokens(ctx context.Context, userID string) ([]Token, error) {
	var out []Token
	err := s.db.View(func(tx *bolt.Tx) error {
		ids := tx.Bucket(bucketUserTokens).Bucket([]byte(userID))
		if ids == nil {
			return nil
		}
		tokens := tx.Bucket(bucketTokens)
		return ids.ForEach(func(_, hash []byte) error {
			var t Token
			if err := getJSON(tokens, hash, &t); err != nil {
				return err
			}
			out = append(out, t)
			return nil
		})
	})
	slices.SortFunc(out, func(a, b Token) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}

func (s *BoltStore) TokenRevocations() uint64 { return s.tokenRevocations.Load() }

func (s *BoltStore) DeleteToken(ctx context.Context, userID, id string) error {
	// Counted once the deletion is committed: a reader that saw the old
	// count may have read the token before it was gone.
	defer s.tokenRevocations.Add(1)
	return s.db.Update(func(tx *bolt.Tx) error {
		ids := tx.Bucket(bucketUserTokens).Bucket([]byte(userID))
		var hash []byte
		if ids != nil {
			hash = ids.Get([]byte(id))
		}
		if hash == nil {
			return fmt.Errorf("token id %q: %w", id, ErrNotFound)
		}
		if err := tx.Bucket(bucketTokens).Delete(hash); err != nil {
			return err
		}
		return ids.Delete([]byte(id))
	})
}

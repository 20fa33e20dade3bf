package store

// Layout of the bbolt file (bucket names in quotes, values JSON unless noted):
//
//	"users"      id -> User
//	"usernames"  name -> id
//	"tokens"     sha256(token) -> Token
//	"usertokens" / userID / token id -> sha256(token) (index for Tokens)
//	"blueprints" / ownerKey / name / version -> {"meta": Blueprint without
//	             bodies, "wasm", "ui", "schemaSource", "schemaNodes": raw}
//	             (the name bucket's sequence numbers the versions)
//	"gadgets"    id -> Gadget
//	"owners"     / ownerID / gadget id -> empty (index for Gadgets)
//	"data"       / gadget id / {"kv" / key -> value, "size" -> uint64 BE}
//	"grants", "grantsby*": shares (shares.go)
//	"saved", "savedby*": saved capabilities (saved.go)
//
// bbolt serializes writers itself and allows concurrent readers, so the only
// lock of BoltStore's own is its group committer's (commit.go). Values
// returned by bbolt are only valid inside the transaction; every one that
// leaves is copied.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	bucketUsers      = []byte("users")
	bucketUsernames  = []byte("usernames")
	bucketTokens     = []byte("tokens")
	bucketUserTokens = []byte("usertokens")
	bucketBlueprints = []byte("blueprints")
	bucketGadgets    = []byte("gadgets")
	bucketOwners     = []byte("owners")
	bucketData       = []byte("data")

	keyMeta         = []byte("meta")
	keyWasm         = []byte("wasm")
	keyUI           = []byte("ui")
	keySchemaSource = []byte("schemaSource")
	keySchemaNodes  = []byte("schemaNodes")
	keyKV           = []byte("kv")
	keySize         = []byte("size")
)

// builtinOwnerKey names the bucket of builtin blueprints; user ids never
// contain a colon, so it cannot collide with one.
const builtinOwnerKey = "builtin:"

// DB is the bbolt database, for the packages that keep buckets of their own
// in the same file (the gatekeepers' ledger). It stays the store's: Close
// closes it.
func (s *BoltStore) DB() *bolt.DB { return s.db }

// NewID returns a fresh unguessable id: 16 random bytes, lower-case base32.
func NewID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather than return short)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// BoltStore is the embedded Store, one bbolt file.
type BoltStore struct {
	db *bolt.DB
	// commits runs the gadget data commits, many to a transaction.
	commits *groupCommitter
	// tokenRevocations counts DeleteToken calls (tokens.go).
	tokenRevocations atomic.Uint64
	// shareChanges counts committed changes to grants (shares.go).
	shareChanges atomic.Uint64
	// savedDrops counts committed drops of saved tokens (saved.go).
	savedDrops atomic.Uint64
}

var _ Store = (*BoltStore)(nil)

// Open opens or creates the store in file path.
func Open(path string) (*BoltStore, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("open store %s: it is locked by another process (is another gadgetd using this data dir?)", path)
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketUsers, bucketUsernames, bucketTokens, bucketUserTokens, bucketBlueprints, bucketGadgets, bucketOwners, bucketData} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		if err := createShareBuckets(tx); err != nil {
			return err
		}
		if err := createSavedBuckets(tx); err != nil {
			return err
		}
		return indexTokensWithoutID(tx)
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return &BoltStore{db: db, commits: &groupCommitter{db: db}}, nil
}

// Close closes the file.
func (s *BoltStore) Close() error { return s.db.Close() }

func getJSON(b *bolt.Bucket, key []byte, v any) error {
	raw := b.Get(key)
	if raw == nil {
		return ErrNotFound
	}
	return json.Unmarshal(raw, v)
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, raw)
}

func (s *BoltStore) CreateUser(ctx context.Context, name string) (User, error) {
	u := User{ID: NewID(), Name: name, CreatedAt: time.Now().UTC()}
	err := s.db.Update(func(tx *bolt.Tx) error {
		names := tx.Bucket(bucketUsernames)
		if names.Get([]byte(name)) != nil {
			return fmt.Errorf("user %q: %w", name, ErrExists)
		}
		if err := names.Put([]byte(name), []byte(u.ID)); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketUsers), []byte(u.ID), u)
	})
	if err != nil {
		return User{}, err
	}
	return u, nil
}

func (s *BoltStore) User(ctx context.Context, id string) (User, error) {
	var u User
	err := s.db.View(func(tx *bolt.Tx) error { return getJSON(tx.Bucket(bucketUsers), []byte(id), &u) })
	return u, err
}

func (s *BoltStore) UserByName(ctx context.Context, name string) (User, error) {
	var u User
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketUsernames).Get([]byte(name))
		if id == nil {
			return ErrNotFound
		}
		return getJSON(tx.Bucket(bucketUsers), id, &u)
	})
	return u, err
}

func ownerKey(owner string) []byte {
	if owner == "" {
		return []byte(builtinOwnerKey)
	}
	return []byte(owner)
}

func (s *BoltStore) PutBlueprint(ctx context.Context, bp BlueprintRecord, replace bool) (BlueprintRecord, error) {
	err := s.db.Update(func(tx *bolt.Tx) error {
		owner, err := tx.Bucket(bucketBlueprints).CreateBucketIfNotExists(ownerKey(bp.Owner))
		if err != nil {
			return err
		}
		name, err := owner.CreateBucketIfNotExists([]byte(bp.Name))
		if err != nil {
			return err
		}
		if name.Bucket([]byte(bp.Version)) != nil {
			if !replace {
				return fmt.Errorf("blueprint %s version %s: %w", bp.Name, bp.Version, ErrExists)
			}
			if err := name.DeleteBucket([]byte(bp.Version)); err != nil {
				return err
			}
		}
		version, err := name.CreateBucket([]byte(bp.Version))
		if err != nil {
			return err
		}
		if bp.Seq, err = name.NextSequence(); err != nil {
			return err
		}
		meta := bp
		meta.Wasm, meta.UI, meta.SchemaSource, meta.SchemaNodes = nil, "", "", nil
		if err := putJSON(version, keyMeta, meta); err != nil {
			return err
		}
		for k, v := range map[string][]byte{
			string(keyWasm): bp.Wasm, string(keyUI): []byte(bp.UI),
			string(keySchemaSource): []byte(bp.SchemaSource), string(keySchemaNodes): bp.SchemaNodes,
		} {
			if err := version.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	return bp, err
}

func (s *BoltStore) Blueprint(ctx context.Context, owner, name, version string) (BlueprintRecord, error) {
	return s.blueprint(owner, name, version, true)
}

func (s *BoltStore) BlueprintMeta(ctx context.Context, owner, name, version string) (BlueprintRecord, error) {
	return s.blueprint(owner, name, version, false)
}

// blueprint reads one version's record, and its bodies if bodies is set.
func (s *BoltStore) blueprint(owner, name, version string, bodies bool) (BlueprintRecord, error) {
	var bp BlueprintRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketBlueprints).Bucket(ownerKey(owner))
		if b != nil {
			if b = b.Bucket([]byte(name)); b != nil {
				b = b.Bucket([]byte(version))
			}
		}
		if b == nil {
			return fmt.Errorf("blueprint %s version %s: %w", name, version, ErrNotFound)
		}
		if err := getJSON(b, keyMeta, &bp); err != nil || !bodies {
			return err
		}
		bp.Wasm = bytes.Clone(b.Get(keyWasm))
		bp.UI = string(b.Get(keyUI))
		bp.SchemaSource = string(b.Get(keySchemaSource))
		bp.SchemaNodes = bytes.Clone(b.Get(keySchemaNodes))
		return nil
	})
	return bp, err
}

func (s *BoltStore) Blueprints(ctx context.Context, owner string) ([]BlueprintRecord, error) {
	var out []BlueprintRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		ob := tx.Bucket(bucketBlueprints).Bucket(ownerKey(owner))
		if ob == nil {
			return nil
		}
		return ob.ForEachBucket(func(name []byte) error {
			var versions []BlueprintRecord
			err := ob.Bucket(name).ForEachBucket(func(version []byte) error {
				var bp BlueprintRecord
				if err := getJSON(ob.Bucket(name).Bucket(version), keyMeta, &bp); err != nil {
					return err
				}
				versions = append(versions, bp)
				return nil
			})
			slices.SortFunc(versions, func(a, b BlueprintRecord) int { return cmp.Compare(a.Seq, b.Seq) })
			out = append(out, versions...)
			return err
		})
	})
	return out, err
}

func (s *BoltStore) CreateGadget(ctx context.Context, g GadgetRecord) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		gadgets := tx.Bucket(bucketGadgets)
		if gadgets.Get([]byte(g.ID)) != nil {
			return fmt.Errorf("gadget %s: %w", g.ID, ErrExists)
		}
		if err := putJSON(gadgets, []byte(g.ID), g); err != nil {
			return err
		}
		owner, err := tx.Bucket(bucketOwners).CreateBucketIfNotExists([]byte(g.OwnerID))
		if err != nil {
			return err
		}
		return owner.Put([]byte(g.ID), nil)
	})
}

func (s *BoltStore) Gadget(ctx context.Context, id string) (GadgetRecord, error) {
	var g GadgetRecord
	err := s.db.View(func(tx *bolt.Tx) error { return getJSON(tx.Bucket(bucketGadgets), []byte(id), &g) })
	return g, err
}

func (s *BoltStore) Gadgets(ctx context.Context, ownerID string) ([]GadgetRecord, error) {
	var out []GadgetRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		owner := tx.Bucket(bucketOwners).Bucket([]byte(ownerID))
		if owner == nil {
			return nil
		}
		gadgets := tx.Bucket(bucketGadgets)
		return owner.ForEach(func(id, _ []byte) error {
			var g GadgetRecord
			if err := getJSON(gadgets, id, &g); err != nil {
				return err
			}
			out = append(out, g)
			return nil
		})
	})
	slices.SortFunc(out, func(a, b GadgetRecord) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}

func (s *BoltStore) DeleteGadget(ctx context.Context, id string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		var g GadgetRecord
		if err := getJSON(tx.Bucket(bucketGadgets), []byte(id), &g); err != nil {
			return err
		}
		if err := tx.Bucket(bucketGadgets).Delete([]byte(id)); err != nil {
			return err
		}
		if owner := tx.Bucket(bucketOwners).Bucket([]byte(g.OwnerID)); owner != nil {
			if err := owner.Delete([]byte(id)); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketData).DeleteBucket([]byte(id)); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
			return err
		}
		if err := s.dropGadgetSaved(tx, id); err != nil {
			return err
		}
		return s.dropGadgetGrants(tx, id)
	})
}

package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/storage"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

// Errors a Store returns; callers test them with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	// ErrLimit is returned when a user already has as many of something
	// as they may.
	ErrLimit = errors.New("limit reached")
)

// TokenHash is the SHA-256 of a login token. Stores never see raw tokens.
type TokenHash [sha256.Size]byte

// HashToken returns the hash under which token is stored.
func HashToken(token string) TokenHash { return sha256.Sum256([]byte(token)) }

// Token is the public record of one login token: everything about it but
// the secret, which no store holds.
type Token struct {
	ID        string // short public handle, unique among its user's tokens
	UserID    string
	Label     string // for humans: where the token is used
	CreatedAt time.Time
	ExpiresAt time.Time // zero: never
}

// User is one account.
type User struct {
	ID        string // opaque, random, never reused
	Name      string // unique login name
	CreatedAt time.Time
}

// BlueprintRecord is one installed version of a blueprint.
type BlueprintRecord struct {
	Owner            string // id of the user who installed it; "" for builtins
	Name             string
	Version          string
	Description      string
	SessionInterface uint64
	InstalledAt      time.Time
	Bindings         []gatekeepers.Request // the bindings its gadgets ask for
	Access           blueprint.Access      // its own permissions and roles
	// Seq orders the versions of one (Owner, Name) by installation; the store
	// assigns it.
	Seq uint64

	// The bodies. Blueprints leaves them empty.
	Wasm         []byte
	UI           string
	SchemaSource string
	SchemaNodes  []byte
}

// GadgetRecord is one gadget's registry entry.
type GadgetRecord struct {
	ID               string
	Name             string
	OwnerID          string
	BlueprintOwner   string // "" for a builtin blueprint
	BlueprintName    string
	BlueprintVersion string
	SessionInterface uint64
	CreatedAt        time.Time
}

// Store is gadgetd's durable state. Every method is one transaction.
type Store interface {
	// CreateUser adds a user with a fresh id; ErrExists if the name is taken.
	CreateUser(ctx context.Context, name string) (User, error)
	User(ctx context.Context, id string) (User, error)
	UserByName(ctx context.Context, name string) (User, error)
	// AddToken lets hash log in as t.UserID. The store assigns t.ID and
	// returns the record. It fails with ErrLimit, adding nothing, if the
	// user already has maxPerUser tokens (0: no limit).
	AddToken(ctx context.Context, hash TokenHash, t Token, maxPerUser int) (Token, error)
	// Token finds the record of hash; ErrNotFound if none.
	Token(ctx context.Context, hash TokenHash) (Token, error)
	// Tokens returns userID's tokens, oldest first.
	Tokens(ctx context.Context, userID string) ([]Token, error)
	// DeleteToken removes userID's token with this id; ErrNotFound if
	// userID has no such token, whoever else might.
	DeleteToken(ctx context.Context, userID, id string) error
	// TokenRevocations grows with every DeleteToken, once its change is
	// committed, so callers may cache that a token was valid until it grows.
	TokenRevocations() uint64

	// PutBlueprint stores bp and sets its Seq. If that version exists it
	// fails with ErrExists, unless replace is set (builtins are replaced in
	// place when the operator ships new code under the same version).
	PutBlueprint(ctx context.Context, bp BlueprintRecord, replace bool) (BlueprintRecord, error)
	// Blueprint returns one version with its bodies.
	Blueprint(ctx context.Context, owner, name, version string) (BlueprintRecord, error)
	// BlueprintMeta is Blueprint without the bodies: for a caller that
	// needs a field of the record, without copying megabytes of wasm.
	BlueprintMeta(ctx context.Context, owner, name, version string) (BlueprintRecord, error)
	// Blueprints returns every version owned by owner ("" for builtins),
	// without bodies, ordered by name then Seq.
	Blueprints(ctx context.Context, owner string) ([]BlueprintRecord, error)

	// CreateGadget adds g; ErrExists if the id is taken.
	CreateGadget(ctx context.Context, g GadgetRecord) error
	Gadget(ctx context.Context, id string) (GadgetRecord, error)
	// Gadgets returns the gadgets ownerID owns, oldest first.
	Gadgets(ctx context.Context, ownerID string) ([]GadgetRecord, error)
	// DeleteGadget removes the gadget, all its data and its grants.
	DeleteGadget(ctx context.Context, id string) error

	// Shares (shares.go). Access returns gadget gadgetID as userID
	// reaches it, with their effective role; ErrNotFound if the gadget
	// does not exist or userID may not reach it.
	Access(ctx context.Context, gadgetID, userID string) (GadgetAccess, error)
	// Share gives holderID role on the gadget, as a grant from sharerID
	// below the grant that gives sharerID their role, replacing the role
	// of sharerID's share to holderID if there is one (a redemption of
	// sharerID's link is a grant apart, and stays). ErrNotFound if
	// sharerID may not reach the gadget; ErrDenied if sharerID is a
	// viewer, role is above sharerID's, or holderID is sharerID or the
	// owner.
	Share(ctx context.Context, gadgetID, sharerID, holderID string, role Role) (Grant, error)
	// Unshare deletes the grants holderID holds on the gadget that byID
	// made, or all of them if byID is an owner, each with every grant
	// below it, and returns what it deleted. ErrNotFound if byID may not
	// reach the gadget.
	Unshare(ctx context.Context, gadgetID, byID, holderID string) ([]Grant, error)
	// Grants returns the gadget's grants, oldest first.
	Grants(ctx context.Context, gadgetID string) ([]Grant, error)
	// SharedWith returns the gadgets userID reaches through grants, with
	// the effective role, oldest gadget first.
	SharedWith(ctx context.Context, userID string) ([]GadgetAccess, error)
	// ShareChanges grows with every committed change to grants, so callers
	// may cache an access check until it grows.
	ShareChanges() uint64
	// ChainStamp names the chain from grant grantID up to its gadget's
	// owner as it is now (GadgetAccess.Stamp): it changes whenever a grant
	// along it is lowered, moved or replaced, even if the role comes back;
	// ErrNotFound once the chain is broken (a grant along it revoked).
	ChainStamp(ctx context.Context, grantID string) (string, error)

	// Links (links.go). CreateLink adds a link held by holder (a
	// LinkHolder) giving role, below creatorID's grant, unless creatorID
	// has reached lim's bound on redeemable links (ErrLimit); ErrNotFound
	// and ErrDenied as for Share. Links returns the gadget's links, oldest
	// first. RevokeLink deletes a link with every redemption below it, if
	// byID created it or is an owner (ErrDenied otherwise). Redeem gives
	// userID a grant below the link held by holder, consuming a
	// single-use link in the same transaction, and returns the gadget as
	// userID now reaches it; redeemed is false, and nothing changes, if
	// userID already held as much as the link is worth. ErrLinkInvalid
	// for every link that cannot be redeemed at now, whatever the reason.
	CreateLink(ctx context.Context, gadgetID, creatorID, holder string, role Role, terms LinkTerms, now time.Time, lim LinkLimits) (Grant, error)
	Links(ctx context.Context, gadgetID string) ([]Link, error)
	RevokeLink(ctx context.Context, gadgetID, byID, linkID string) ([]Grant, error)
	Redeem(ctx context.Context, holder, userID string, now time.Time) (a GadgetAccess, redeemed bool, err error)

	// Saved capabilities (saved.go). AddSaved keeps sv under hash (a
	// KeyedHash of its secret), assigning its ID and Via, unless sv.UserID
	// already has maxPerUser live saved tokens (ErrLimit; a token bound to
	// a revoked grant is dead, and pruned then); ErrNotFound if sv.UserID
	// may not reach the gadget, ErrDenied if sv.Role is above their role.
	// Restore returns the record of hash, and the gadget as its saver
	// reaches it now at no more than the saved role; ErrNotFound if there
	// is none, or its saver no longer reaches the gadget through the grant
	// they saved it through. SavedOf returns userID's live ones, oldest
	// first. DropSaved deletes userID's token id; ErrNotFound if userID
	// has none such, whoever else might. SavedDrops grows with every
	// committed drop, a gadget's removal included, so callers may cache
	// that a token was valid until it grows.
	AddSaved(ctx context.Context, hash string, sv Saved, maxPerUser int) (Saved, error)
	Restore(ctx context.Context, hash string) (Saved, GadgetAccess, error)
	SavedOf(ctx context.Context, userID string) ([]Saved, error)
	DropSaved(ctx context.Context, userID, id string) error
	SavedDrops() uint64

	// The gadget's data: these are storage.Store's methods (see there) for
	// the data of gadgetID; GadgetData binds them to one gadget.
	Get(ctx context.Context, gadgetID, key string) (value []byte, found bool, err error)
	List(ctx context.Context, gadgetID, prefix, after string, limit int, maxBytes int64) (entries []storage.Entry, more bool, err error)
	// DataSize is storage.Store's Size.
	DataSize(ctx context.Context, gadgetID string) (int64, error)
	// Commit is storage.Store's Commit. A Commit whose ctx ends while it
	// waits for its turn applies nothing either; one that has begun to
	// write cannot be cancelled.
	Commit(ctx context.Context, gadgetID string, writes []storage.Write, maxSize int64) error

	Close() error
}

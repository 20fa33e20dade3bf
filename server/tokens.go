package server

// Design: a token is checked when it logs in, and again on every call to a
// Workspace or Gadget capability obtained with it and to every session
// opened through those. The capabilities hold a credential (the token's hash
// and expiry), never a verdict that outlives a revocation: a check re-reads
// the token's record from the store whenever any token was revoked since
// its last look (the store counts revocations), and otherwise only compares
// two counters and the expiry. So revoking a token (deleting its record) or
// its expiry cuts everything obtained with it off from its next call,
// wherever it was passed, with no registry of live capabilities to keep in
// step. A guarded session's refusal is answered by a capability of its own,
// made once; it holds no lock while it calls into the session. Whatever
// crosses a guarded session, either way, is guarded alike (membrane.go).

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"capnproto.org/go/capnp/v3"
	capnpserver "capnproto.org/go/capnp/v3/server"
	"capnproto.org/go/capnp/v3/std/capnp/persistent"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/membrane"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

const (
	// tokenPrefix marks gadgetd tokens so secret scanners and humans can
	// tell them apart from other secrets.
	tokenPrefix = "gdt_"
	// maxTokensPerUser bounds the tokens one user may hold at once.
	maxTokensPerUser = 64
	// maxTokenLabelSize bounds a token's label, in bytes.
	maxTokenLabelSize = 200
	// maxTokenLifetime bounds newToken's validForSeconds.
	maxTokenLifetime = 100 * 365 * 24 * time.Hour
)

// Errors of tokens and of the capabilities obtained with them.
var (
	// errInvalidToken is the one answer to every failed login, so a caller
	// learns nothing about which users or tokens exist.
	errInvalidToken = errors.New("invalid token")
	errTokenExpired = errors.New("token expired")
	// Disconnected: the capability is gone for good; log in again.
	errCapRevoked = capnp.Disconnected("the token this capability was obtained with was revoked")
	errCapExpired = capnp.Disconnected("the token this capability was obtained with has expired")
)

// newTokenSecret returns a fresh token: 32 random bytes, base64url.
func newTokenSecret() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather than return short)
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// mintToken gives userID a new token. Only its hash is stored.
func mintToken(ctx context.Context, st store.Store, userID, label string, validFor time.Duration) (string, store.Token, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	rec := store.Token{UserID: userID, Label: label, CreatedAt: now}
	if validFor > 0 {
		rec.ExpiresAt = now.Add(validFor)
	}
	secret := newTokenSecret()
	rec, err := st.AddToken(ctx, store.HashToken(secret), rec, maxTokensPerUser)
	if errors.Is(err, store.ErrLimit) {
		return "", store.Token{}, fmt.Errorf("the user already holds %d tokens, the most allowed: revoke one first", maxTokensPerUser)
	}
	if err != nil {
		return "", store.Token{}, err
	}
	return secret, rec, nil
}

// validToken returns the record of the token hashed to hash if it may log in:
// store.ErrNotFound if there is none (never issued, or revoked),
// errTokenExpired if it has expired.
func validToken(ctx context.Context, st store.Store, hash store.TokenHash) (store.Token, error) {
	tok, err := st.Token(ctx, hash)
	if err != nil {
		return store.Token{}, err
	}
	if !tok.ExpiresAt.IsZero() && !time.Now().Before(tok.ExpiresAt) {
		return store.Token{}, errTokenExpired
	}
	return tok, nil
}

// credential is the token a Workspace was obtained with, carried by that
// Workspace and by every Gadget capability and session reached through it;
// or, for a capability restored from a saved token (Gateway.restore), that
// token (saved set: persistent.go).
type credential struct {
	s         *Server
	hash      store.TokenHash
	id        string    // the token's public id: to mark it in listings, and find its sessions
	expiresAt time.Time // zero: never; a token's expiry never changes
	saved     string    // the saved token's KeyedHash; "" for a login token

	// validAt is 1 + the store's TokenRevocations count at which the token
	// was last seen in the store (0: never), so a check reads the store
	// only after some token was revoked.
	validAt atomic.Uint64
}

func newCredential(s *Server, hash store.TokenHash, tok store.Token) *credential {
	return &credential{s: s, hash: hash, id: tok.ID, expiresAt: tok.ExpiresAt}
}

// check fails if the token has been revoked or has expired since login. A
// nil credential (see guard) passes.
func (c *credential) check(ctx context.Context) error {
	if c == nil {
		return nil
	}
	if c.saved != "" {
		return c.checkSaved(ctx)
	}
	if !c.expiresAt.IsZero() && !time.Now().Before(c.expiresAt) {
		return errCapExpired
	}
	revocations := c.s.store.TokenRevocations()
	if c.validAt.Load() == revocations+1 {
		return nil
	}
	_, err := validToken(ctx, c.s.store, c.hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errCapRevoked
	case errors.Is(err, errTokenExpired):
		return errCapExpired
	case err != nil:
		return err
	}
	c.validAt.Store(revocations + 1)
	return nil
}

// guard makes every method check c before it runs. A nil credential (a
// workspace built in-process by a test, not by login) checks nothing.
func (c *credential) guard(methods []capnpserver.Method) []capnpserver.Method {
	if c == nil {
		return methods
	}
	return guardMethods(methods, c.check)
}

// guardMethods makes every method run check first, and fail with its error.
func guardMethods(methods []capnpserver.Method, check func(context.Context) error) []capnpserver.Method {
	for i := range methods {
		impl := methods[i].Impl
		methods[i].Impl = func(ctx context.Context, call *capnpserver.Call) error {
			if err := check(ctx); err != nil {
				return err
			}
			return impl(ctx, call)
		}
	}
	return methods
}

// guardSession wraps a session a guest returned so that every call on it
// checks c and share (shares.go; nil for the owner's session) first, taking
// ownership of session; and so that saver, never the guest, answers its
// Persistent.save (persistent.go).
func (c *credential) guardSession(session capnp.Client, share *shareCheck, saver *sessionSaver) *guardedSession {
	h := &guardedSession{session: session, cred: c, share: share, save: saver}
	h.membrane = h.newMembrane()
	if c != nil && !c.expiresAt.IsZero() {
		// An expiry is announced by no call: end the session when it comes.
		h.expiry = time.AfterFunc(time.Until(c.expiresAt), func() {
			if err := h.access(context.Background()); capnp.IsDisconnected(err) {
				h.end(err)
			}
		})
	}
	return h
}

// guardedSession forwards every call straight to the session (same
// goroutine, no copy), like countedHook, once its credential and its share
// check out, through its membrane (membrane.go); but a call of Persistent
// (save) goes to the host's saver, so a guest never sees it, nor can
// answer it with a token of its own making. A refused call is answered by
// a capability built with capserver, so that it takes go-capnp's normal
// answer path even when calls were pipelined onto it.
type guardedSession struct {
	session  capnp.Client
	cred     *credential
	share    *shareCheck
	membrane *membrane.Membrane // nil when there is no guard
	entry    *presentSession    // its entry in presence, which it leaves on Shutdown
	expiry   *time.Timer        // ends the session when its token expires; nil if it never does

	save      *sessionSaver
	saverOnce sync.Once
	saver     capnp.Client // save's capability; made on first use

	refuseOnce sync.Once
	refuser    capnp.Client // fails every call with refusal; made on first use
	refusal    atomic.Pointer[error]
}

// target is where a call of method m goes: the session, the host's saver
// for any method of Persistent, or the refuser.
func (h *guardedSession) target(ctx context.Context, m capnp.Method) capnp.Client {
	err := h.access(ctx)
	if err == nil && m.InterfaceID == persistent.Persistent_TypeID {
		h.saverOnce.Do(func() { h.saver = h.save.client() })
		return h.saver
	}
	if err == nil {
		return h.session
	}
	if h.membrane != nil && capnp.IsDisconnected(err) {
		// Gone for good: so is everything that crossed the session.
		h.membrane.Close(err)
	}
	h.refusal.Store(&err)
	h.refuseOnce.Do(func() {
		srv := capserver.NewServer(nil, nil, nil)
		srv.HandleUnknownMethod = func(m capnp.Method) *capnpserver.Method {
			return &capnpserver.Method{Method: m, Impl: func(context.Context, *capnpserver.Call) error { return *h.refusal.Load() }}
		}
		h.refuser = capnp.NewClient(srv)
	})
	return h.refuser
}

// admitting returns ctx for a call on the session, so that the gadget's
// worker checks the session's access (its credential, its share) again as
// it takes the call off its queue: a call queued before a login token is
// revoked, a saved token dropped or a share revoked never reaches the guest
// after. The share's admitting also names the acting user; its check is
// replaced by access, which includes it.
func (h *guardedSession) admitting(ctx context.Context) context.Context {
	if h.cred == nil && h.share == nil {
		return ctx
	}
	return wasmhost.WithAdmission(h.share.admitting(ctx), h.access)
}

// Send and Recv take a call to the session through its membrane
// (membrane.go).
func (h *guardedSession) Send(ctx context.Context, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
	t := h.target(ctx, s.Method)
	if t == h.session && h.membrane != nil {
		return h.membrane.SendIn(h.admitting(ctx), t, s)
	}
	return t.SendCall(h.admitting(ctx), s)
}

func (h *guardedSession) Recv(ctx context.Context, r capnp.Recv) capnp.PipelineCaller {
	t := h.target(ctx, r.Method)
	if t == h.session && h.membrane != nil {
		return h.membrane.RecvIn(h.admitting(ctx), t, r)
	}
	return t.RecvCall(h.admitting(ctx), r)
}

// Brand is the session's own, so wasmhost still knows its session when a
// client hands it back.
func (h *guardedSession) Brand() capnp.Brand {
	snap := h.session.Snapshot()
	defer snap.Release()
	return snap.Brand()
}

func (h *guardedSession) Shutdown() {
	if h.expiry != nil {
		h.expiry.Stop()
	}
	if h.entry != nil {
		h.entry.leave()
	}
	h.session.Release()
	h.refuseOnce.Do(func() {}) // orders this read of refuser after its making
	h.refuser.Release()
	h.saverOnce.Do(func() {})
	h.saver.Release()
}

func (h *guardedSession) String() string { return "guarded " + h.session.String() }

func (w *workspace) Tokens(ctx context.Context, call schema.Workspace_tokens) error {
	tokens, err := w.s.store.Tokens(ctx, w.user.ID)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewTokens(int32(len(tokens)))
	if err != nil {
		return err
	}
	for i, t := range tokens {
		if err := w.fillTokenInfo(list.At(i), t); err != nil {
			return err
		}
	}
	return nil
}

func (w *workspace) NewToken(ctx context.Context, call schema.Workspace_newToken) error {
	label, err := call.Args().Label()
	if err != nil {
		return err
	}
	if len(label) > maxTokenLabelSize {
		return fmt.Errorf("token label is longer than %d bytes", maxTokenLabelSize)
	}
	secs := call.Args().ValidForSeconds()
	if secs > uint64(maxTokenLifetime/time.Second) {
		return fmt.Errorf("validForSeconds %d is more than 100 years; use 0 for a token that never expires", secs)
	}
	secret, tok, err := mintToken(ctx, w.s.store, w.user.ID, label, time.Duration(secs)*time.Second)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	if err := res.SetToken(secret); err != nil {
		return err
	}
	info, err := res.NewInfo()
	if err != nil {
		return err
	}
	return w.fillTokenInfo(info, tok)
}

func (w *workspace) RevokeToken(ctx context.Context, call schema.Workspace_revokeToken) error {
	id, err := call.Args().Id()
	if err != nil {
		return err
	}
	err = w.s.store.DeleteToken(ctx, w.user.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("unknown token id %q", id)
	}
	if err == nil {
		w.s.presence.endRevoked(ctx, "", id)
	}
	return err
}

func (w *workspace) fillTokenInfo(dst schema.TokenInfo, t store.Token) error {
	dst.SetCreatedAt(t.CreatedAt.UnixMilli())
	if !t.ExpiresAt.IsZero() {
		dst.SetExpiresAt(t.ExpiresAt.UnixMilli())
	}
	dst.SetCurrent(w.cred != nil && t.ID == w.cred.id)
	if err := dst.SetId(t.ID); err != nil {
		return err
	}
	return dst.SetLabel(t.Label)
}

// KeptToken returns the token kept in file if it still logs in as user name,
// and otherwise issues name a new one (creating the user if needed) and
// keeps it in file, readable by the server's OS user only. `serve --dev`
// uses it so that restarts reuse one token instead of piling up new ones.
func (s *Server) KeptToken(ctx context.Context, name, file, label string) (string, error) {
	u, err := s.store.UserByName(ctx, name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	if raw, err := os.ReadFile(file); err == nil && u.ID != "" {
		secret := strings.TrimSpace(string(raw))
		if tok, err := validToken(ctx, s.store, store.HashToken(secret)); err == nil && tok.UserID == u.ID {
			return secret, nil
		}
	}
	secret, err := issueToken(ctx, s.store, name, true, label)
	if err != nil {
		return "", err
	}
	return secret, writePrivateFile(file, []byte(secret+"\n"))
}

// writePrivateFile replaces file with data, mode 0600, atomically.
func writePrivateFile(file string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+"-*") // mode 0600
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), file)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return nil
}

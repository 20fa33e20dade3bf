package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

var userNameSyntax = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

func checkUserName(name string) error {
	if !userNameSyntax.MatchString(name) {
		return fmt.Errorf("user name %q is invalid: use 1 to 32 lower-case letters, digits, '-' or '_', starting with a letter", name)
	}
	return nil
}

// issueToken gives user name a new token labelled label, creating the user
// if create is set. Only the token's hash is stored.
func issueToken(ctx context.Context, st store.Store, name string, create bool, label string) (string, error) {
	if err := checkUserName(name); err != nil {
		return "", err
	}
	u, err := st.UserByName(ctx, name)
	switch {
	case errors.Is(err, store.ErrNotFound) && create:
		if u, err = st.CreateUser(ctx, name); err != nil {
			return "", err
		}
	case errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("no user named %q", name)
	case err != nil:
		return "", err
	}
	token, _, err := mintToken(ctx, st, u.ID, label, 0)
	return token, err
}

// AddUser creates user name in the data directory dir, which no running
// server may hold, and returns the user's first token.
func AddUser(ctx context.Context, dir, name string) (token string, err error) {
	if err := checkUserName(name); err != nil {
		return "", err
	}
	st, err := store.Open(filepath.Join(dir, storeFile))
	if err != nil {
		return "", err
	}
	defer st.Close()
	if _, err := st.UserByName(ctx, name); err == nil {
		return "", fmt.Errorf("user %q already exists", name)
	}
	return issueToken(ctx, st, name, true, "user add")
}

// IssueToken gives user name a fresh token, creating the user if needed.
func (s *Server) IssueToken(ctx context.Context, name string) (string, error) {
	return issueToken(ctx, s.store, name, true, "")
}

// gateway is the bootstrap capability. Each connection has its own, so a
// login can lift that connection's budget (peer is nil in-process).
type gateway struct {
	s    *Server
	peer *rpcguard.Peer
}

// Login looks the token up by its SHA-256. Comparing hashes rather than
// tokens is what keeps this timing-safe: the index lookup can at most leak
// how many leading bytes of an attacker-chosen token's hash match a stored
// hash, which says nothing about any token.
func (g *gateway) Login(ctx context.Context, call schema.Gateway_login) error {
	token, err := call.Args().Token()
	if err != nil || token == "" {
		return errInvalidToken
	}
	hash := store.HashToken(token)
	tok, err := validToken(ctx, g.s.store, hash)
	var u store.User
	if err == nil {
		u, err = g.s.store.User(ctx, tok.UserID)
	}
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, errTokenExpired) {
			g.s.cfg.logger.Error("login: store lookup failed", "err", err)
		}
		return errInvalidToken
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	// All of a user's connections share one in-flight budget, and a user
	// may have only so many.
	if err := g.peer.Authenticated(u.ID); err != nil {
		return err
	}
	info, err := res.NewUser()
	if err != nil {
		return err
	}
	if err := info.SetId(u.ID); err != nil {
		return err
	}
	if err := info.SetName(u.Name); err != nil {
		return err
	}
	ws := &workspace{s: g.s, user: u, cred: newCredential(g.s, hash, tok)}
	return res.SetWorkspace(schema.Workspace(capserver.New(ws.cred.guard(schema.Workspace_Methods(nil, ws)), ws, nil)))
}

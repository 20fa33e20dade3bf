package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// pseudonymKeyFile holds the secret behind Caller.userId, in the data
// directory, readable by the server's user only.
const pseudonymKeyFile = "pseudonym.key"

// pseudonym is the id gadget gadgetID knows user userID by: a keyed hash of
// the two. It is stable for the pair, so a guest can key a user's data by
// it, but it reveals nothing of the internal user id, differs between
// gadgets (two gadgets cannot link their users), and cannot be computed
// without the server's key.
func (s *Server) pseudonym(gadgetID, userID string) string {
	m := hmac.New(sha256.New, s.pseudonymKey)
	m.Write([]byte(gadgetID))
	m.Write([]byte{0})
	m.Write([]byte(userID))
	return "u_" + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// loadOrCreateKey returns the 32-byte secret in path, creating it (mode
// 0600) on first use.
func loadOrCreateKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key = make([]byte, 32)
		rand.Read(key)
		f, cerr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if cerr != nil {
			return nil, fmt.Errorf("creating %s: %w", path, cerr)
		}
		_, werr := f.Write(key)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("writing %s: %w", path, werr)
		}
		return key, nil
	}
	if err != nil {
		return nil, err
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("%s holds %d bytes, want 32: restore it from a backup, or delete it to give every user a new id in every gadget", path, len(key))
	}
	return key, nil
}

// Command notes is the second example gadget: private notes for every user of
// one gadget, with paging and search (notespb.Notes). Where the counter shows
// one value shared by everyone, notes shows per-user data in one gadget's
// storage, input validation, and what a gadget does when the host's storage
// limits are hit.
//
// Build it with `gadgetd blueprint build examples/notes`.
//
// # Who sees what
//
// Guest.open(caller) returns a session bound to caller.userId, and every key
// the session reads or writes starts with that user's prefix, so no call on
// it can name another user's note: an id another user owns is simply "no
// note". Viewers get a session that reads but refuses to write.
//
// # Storage layout
//
// Keys are text; <uid> is the caller's user id escaped with url.PathEscape,
// so it never contains '/' and one user's prefix is never a prefix of
// another's (ids "a" and "a/n/x" stay apart).
//
//	u/<uid>/meta       16 bytes, big endian: lastID uint32, count uint32,
//	                   bytes uint64 (see meta)
//	u/<uid>/n/<inv>    one note: a Cap'n Proto message (unpacked, single
//	                   segment) whose root is a notespb.Note
//
// <inv> is the note id's bitwise complement as 8 lower-case hex digits
// (alice's note 1 is u/alice/n/fffffffe, note 2 is u/alice/n/fffffffd), so
// storage's byte order lists a user's notes newest first, and paging "after
// id N" is storage paging after N's key. Ids come from lastID, a per-user
// sequence that only grows (removing a note never frees its id). meta keeps
// count and bytes (the size of the user's note entries, keys plus values, as
// the host counts them against its limits) up to date, so stats is one read
// and the per-user cap is one comparison.
//
// Every call delivered into the gadget is one storage transaction (see
// schema/gadget.capnp): a call that fails after some of its writes leaves
// nothing behind, which is why add can write the note and then meta without
// any repair logic.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/examples/notes/notespb"
	"github.com/gadgetd/gadgetd/guest"
	"github.com/gadgetd/gadgetd/schema"
)

func init() { guest.Serve(app{}) }

func main() {}

// Limits. The host allows values up to 1 MiB, so a note (at most
// maxBodyBytes + maxTitleBytes + a few dozen bytes of framing) always fits
// in one value; the host's total size limit per gadget (64 MiB by default)
// is shared by all users and usually binds before maxNotes does.
const (
	maxTitleBytes = 200
	maxBodyBytes  = 64 << 10
	maxNotes      = 10_000
	maxQueryBytes = 200

	defaultPage = 50
	maxPage     = 200
	// pageBudget caps the text in one list or search answer, keeping it
	// well under the host's 8 MiB frame limit whatever the notes hold.
	pageBudget = 4 << 20
	// scanBatch is how many notes one storage.list call fetches while
	// paging or searching: at most about 2 MiB per answer.
	scanBatch = 32
	// maxUserKey bounds the escaped user id so every key stays far below
	// the host's 512-byte key limit.
	maxUserKey = 256
)

// app is the gadget's main object: it opens sessions.
type app struct{}

func (app) Open(ctx context.Context, call schema.Guest_open) error {
	c, err := call.Args().Caller()
	if err != nil {
		return fmt.Errorf("notes: reading the caller: %w", err)
	}
	uid, err := c.UserId()
	if err != nil || uid == "" {
		return errors.New("notes: the caller has no user id; notes are kept per user")
	}
	esc := url.PathEscape(uid)
	if len(esc) > maxUserKey {
		return fmt.Errorf("notes: user id is too long (%d bytes escaped, at most %d)", len(esc), maxUserKey)
	}
	name, _ := c.UserName()
	list, err := c.Permissions()
	if err != nil {
		return fmt.Errorf("notes: reading the caller's permissions: %w", err)
	}
	perms, err := texts(list)
	if err != nil {
		return fmt.Errorf("notes: reading the caller's permissions: %w", err)
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	s := &session{
		userName:    name,
		permissions: perms,
		// blueprint.json declares "edit" and gives it to editors; the
		// platform computes who holds it, enforcing it is this guest's job.
		canWrite: slices.Contains(perms, "edit"),
		prefix:   "u/" + esc + "/",
		// Arguments are released when Open returns: keep a reference to
		// the context, which Info asks. A bare host (notestest) lends none.
		context: call.Args().Context().AddRef(),
	}
	return res.SetSession(capnp.Client(notespb.Notes_ServerToClient(s)))
}

// session is one user's view of the notes. Its fields never change.
type session struct {
	userName    string
	permissions []string // Caller.permissions at open
	canWrite    bool     // holds "edit"
	prefix      string   // "u/<uid>/"
	context     schema.SessionContext
}

// Shutdown runs when the host drops the session.
func (s *session) Shutdown() { s.context.Release() }

func (s *session) metaKey() string     { return s.prefix + "meta" }
func (s *session) notesPrefix() string { return s.prefix + "n/" }
func (s *session) noteKey(id uint32) string {
	return fmt.Sprintf("%sn/%08x", s.prefix, ^id)
}

var errReadOnly = errors.New("notes: permission denied: viewers can read notes but not add, change or remove them")

func (s *session) Add(ctx context.Context, call notespb.Notes_add) error {
	if !s.canWrite {
		return errReadOnly
	}
	title, body, err := textArgs(call.Args().Title, call.Args().Body)
	if err != nil {
		return err
	}
	st := guest.Storage(ctx)
	m, err := s.loadMeta(ctx, st)
	if err != nil {
		return err
	}
	if m.count >= maxNotes {
		return fmt.Errorf("notes: you already have %d notes, the most one user may keep; remove some first", m.count)
	}
	if m.lastID == math.MaxUint32 {
		return errors.New("notes: note ids are used up for this user")
	}
	now := time.Now().UnixMilli()
	n := note{id: m.lastID + 1, title: title, body: body, created: now, updated: now}
	key := s.noteKey(n.id)
	val, err := n.encode()
	if err != nil {
		return err
	}
	if err := put(ctx, st, key, val); err != nil {
		return saveError(err)
	}
	m.lastID = n.id
	m.count++
	m.bytes += entrySize(key, val)
	if err := s.saveMeta(ctx, st, m); err != nil {
		return err
	}
	return returnNote(call.AllocResults, &n)
}

func (s *session) Get(ctx context.Context, call notespb.Notes_get) error {
	st := guest.Storage(ctx)
	n, _, err := s.loadNote(ctx, st, call.Args().Id())
	if err != nil {
		return err
	}
	return returnNote(call.AllocResults, n)
}

func (s *session) Update(ctx context.Context, call notespb.Notes_update) error {
	if !s.canWrite {
		return errReadOnly
	}
	title, body, err := textArgs(call.Args().Title, call.Args().Body)
	if err != nil {
		return err
	}
	st := guest.Storage(ctx)
	n, oldSize, err := s.loadNote(ctx, st, call.Args().Id())
	if err != nil {
		return err
	}
	m, err := s.loadMeta(ctx, st)
	if err != nil {
		return err
	}
	n.title, n.body = title, body
	n.updated = max(time.Now().UnixMilli(), n.updated) // never goes back, even if the clock does
	key := s.noteKey(n.id)
	val, err := n.encode()
	if err != nil {
		return err
	}
	if err := put(ctx, st, key, val); err != nil {
		return saveError(err)
	}
	m.bytes = m.bytes - oldSize + entrySize(key, val)
	if err := s.saveMeta(ctx, st, m); err != nil {
		return err
	}
	return returnNote(call.AllocResults, n)
}

func (s *session) Remove(ctx context.Context, call notespb.Notes_remove) error {
	if !s.canWrite {
		return errReadOnly
	}
	st := guest.Storage(ctx)
	n, size, err := s.loadNote(ctx, st, call.Args().Id())
	if err != nil {
		return err
	}
	m, err := s.loadMeta(ctx, st)
	if err != nil {
		return err
	}
	if m.count == 0 || m.bytes < size {
		return errors.New("notes: stored data is corrupt (the per-user record does not count this note)")
	}
	if err := del(ctx, st, s.noteKey(n.id)); err != nil {
		return saveError(err)
	}
	m.count--
	m.bytes -= size
	return s.saveMeta(ctx, st, m)
}

func (s *session) List(ctx context.Context, call notespb.Notes_list) error {
	limit, err := pageLimit(call.Args().Limit())
	if err != nil {
		return err
	}
	st := guest.Storage(ctx)
	notes, next, err := s.scan(ctx, st, call.Args().After(), limit, nil)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetNext(next)
	return fillList(notes, res.NewNotes)
}

func (s *session) Search(ctx context.Context, call notespb.Notes_search) error {
	q, err := call.Args().Query()
	if err != nil {
		return fmt.Errorf("notes: reading the query: %w", err)
	}
	switch {
	case strings.TrimSpace(q) == "":
		return errors.New("notes: search query is empty")
	case len(q) > maxQueryBytes:
		return fmt.Errorf("notes: search query is %d bytes, at most %d", len(q), maxQueryBytes)
	case !utf8.ValidString(q):
		return errors.New("notes: search query is not valid UTF-8")
	}
	limit, err := pageLimit(call.Args().Limit())
	if err != nil {
		return err
	}
	q = strings.ToLower(q)
	match := func(n *note) bool {
		return strings.Contains(strings.ToLower(n.title), q) || strings.Contains(strings.ToLower(n.body), q)
	}
	st := guest.Storage(ctx)
	notes, next, err := s.scan(ctx, st, call.Args().After(), limit, match)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetNext(next)
	return fillList(notes, res.NewNotes)
}

func (s *session) Stats(ctx context.Context, call notespb.Notes_stats) error {
	st := guest.Storage(ctx)
	m, err := s.loadMeta(ctx, st)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetCount(m.count)
	res.SetBytes(m.bytes)
	return nil
}

func (s *session) Info(ctx context.Context, call notespb.Notes_info) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetCanWrite(s.canWrite)
	if err := s.fillPermissions(ctx, res.NewPermissions); err != nil {
		return err
	}
	res.SetMaxNotes(maxNotes)
	res.SetMaxTitleBytes(maxTitleBytes)
	res.SetMaxBodyBytes(maxBodyBytes)
	return res.SetUserName(s.userName)
}

// fillPermissions sets the caller's permissions as the platform says they
// are now (SessionContext.caller), or as open was told without a context.
func (s *session) fillPermissions(ctx context.Context, newList func(int32) (capnp.TextList, error)) error {
	if !s.context.IsValid() {
		return setTexts(newList, s.permissions)
	}
	res, release, err := s.context.CallerSync(ctx, nil)
	if err != nil {
		return err
	}
	defer release()
	caller, err := res.Caller()
	if err != nil {
		return err
	}
	list, err := caller.Permissions()
	if err != nil {
		return err
	}
	now, err := texts(list)
	if err != nil {
		return err
	}
	return setTexts(newList, now)
}

// Present answers who has the gadget open now, from the session's context.
// A bare host (notestest) lends none, so the session cannot tell.
func (s *session) Present(ctx context.Context, call notespb.Notes_present) error {
	if !s.context.IsValid() {
		return errors.New("notes: the host lent no session context to ask who is present")
	}
	here, release, err := s.context.PresentSync(ctx, nil)
	if err != nil {
		return err
	}
	defer release()
	callers, err := here.Present()
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	people, err := res.NewPeople(int32(callers.Len()))
	if err != nil {
		return err
	}
	for i := range callers.Len() {
		c, p := callers.At(i), people.At(i)
		p.SetRole(notespb.Role(c.Role()))
		id, err := c.UserId()
		if err != nil {
			return err
		}
		name, err := c.UserName()
		if err != nil {
			return err
		}
		if err := p.SetUserId(id); err != nil {
			return err
		}
		if err := p.SetUserName(name); err != nil {
			return err
		}
	}
	return nil
}

func texts(list capnp.TextList) ([]string, error) {
	out := make([]string, list.Len())
	for i := range out {
		var err error
		if out[i], err = list.At(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func setTexts(newList func(int32) (capnp.TextList, error), texts []string) error {
	list, err := newList(int32(len(texts)))
	if err != nil {
		return err
	}
	for i, t := range texts {
		if err := list.Set(i, t); err != nil {
			return err
		}
	}
	return nil
}

// scan pages through the user's notes newest first, starting after the note
// with id after (0: from the newest), and collects up to limit notes that
// match (all when match is nil) within pageBudget bytes of text. next is the
// id of the last note collected when at least one more matching note exists,
// else 0.
func (s *session) scan(ctx context.Context, st schema.Storage, after uint32, limit int, match func(*note) bool) (notes []*note, next uint32, err error) {
	from := ""
	if after != 0 {
		from = s.noteKey(after)
	}
	budget := pageBudget
	for {
		batch := scanBatch
		if match == nil && limit-len(notes)+1 < batch {
			batch = limit - len(notes) + 1 // one more than needed tells us whether there is a next page
		}
		entries, err := list(ctx, st, s.notesPrefix(), from, batch)
		if err != nil {
			return nil, 0, err
		}
		for _, e := range entries {
			n, err := decodeNote(e.Value)
			if err != nil {
				return nil, 0, fmt.Errorf("notes: stored note %s is corrupt: %w", e.Key, err)
			}
			if match != nil && !match(n) {
				continue
			}
			size := len(n.title) + len(n.body)
			if len(notes) == limit || (len(notes) > 0 && size > budget) {
				return notes, notes[len(notes)-1].id, nil
			}
			notes = append(notes, n)
			budget -= size
		}
		// Storage may answer with fewer entries than asked; only an empty
		// answer means there are no more.
		if len(entries) == 0 {
			return notes, 0, nil
		}
		from = entries[len(entries)-1].Key
	}
}

func pageLimit(limit uint32) (int, error) {
	switch {
	case limit == 0:
		return defaultPage, nil
	case limit > maxPage:
		return 0, fmt.Errorf("notes: limit %d is too large; at most %d notes per page", limit, maxPage)
	}
	return int(limit), nil
}

// textArgs reads and validates a title and body.
func textArgs(titleOf, bodyOf func() (string, error)) (title, body string, err error) {
	title, err = titleOf()
	if err != nil {
		return "", "", fmt.Errorf("notes: reading the title: %w", err)
	}
	body, err = bodyOf()
	if err != nil {
		return "", "", fmt.Errorf("notes: reading the body: %w", err)
	}
	switch {
	case strings.TrimSpace(title) == "":
		return "", "", errors.New("notes: title is empty")
	case len(title) > maxTitleBytes:
		return "", "", fmt.Errorf("notes: title is %d bytes, at most %d", len(title), maxTitleBytes)
	case len(body) > maxBodyBytes:
		return "", "", fmt.Errorf("notes: body is %d bytes, at most %d (64 KiB)", len(body), maxBodyBytes)
	case !utf8.ValidString(title):
		return "", "", errors.New("notes: title is not valid UTF-8")
	case !utf8.ValidString(body):
		return "", "", errors.New("notes: body is not valid UTF-8")
	}
	return title, body, nil
}

// loadNote reads note id of this user and the size of its storage entry.
func (s *session) loadNote(ctx context.Context, st schema.Storage, id uint32) (*note, uint64, error) {
	if id == 0 {
		return nil, 0, errors.New("notes: no note 0 (ids start at 1)")
	}
	key := s.noteKey(id)
	val, found, err := get(ctx, st, key)
	if err != nil {
		return nil, 0, err
	}
	if !found {
		return nil, 0, fmt.Errorf("notes: no note %d", id)
	}
	n, err := decodeNote(val)
	if err != nil || n.id != id {
		return nil, 0, fmt.Errorf("notes: stored note %d is corrupt", id)
	}
	return n, entrySize(key, val), nil
}

// meta is the per-user record at u/<uid>/meta.
type meta struct {
	lastID uint32 // the newest id handed out; 0 before the first note
	count  uint32 // notes the user has
	bytes  uint64 // storage taken by those notes (keys plus values)
}

const metaSize = 4 + 4 + 8

func (m meta) encode() []byte {
	b := binary.BigEndian.AppendUint32(nil, m.lastID)
	b = binary.BigEndian.AppendUint32(b, m.count)
	return binary.BigEndian.AppendUint64(b, m.bytes)
}

func (s *session) loadMeta(ctx context.Context, st schema.Storage) (meta, error) {
	val, found, err := get(ctx, st, s.metaKey())
	if err != nil || !found {
		return meta{}, err
	}
	if len(val) != metaSize {
		return meta{}, errors.New("notes: stored data is corrupt (the per-user record has the wrong size)")
	}
	return meta{
		lastID: binary.BigEndian.Uint32(val[0:]),
		count:  binary.BigEndian.Uint32(val[4:]),
		bytes:  binary.BigEndian.Uint64(val[8:]),
	}, nil
}

func (s *session) saveMeta(ctx context.Context, st schema.Storage, m meta) error {
	if err := put(ctx, st, s.metaKey(), m.encode()); err != nil {
		return saveError(err)
	}
	return nil
}

// note is a decoded note.
type note struct {
	id               uint32
	title, body      string
	created, updated int64
}

// encode stores n as a Cap'n Proto message with a notespb.Note root.
func (n *note) encode() ([]byte, error) {
	msg, seg, err := capnp.NewMessage(capnp.SingleSegment(nil))
	if err != nil {
		return nil, err
	}
	root, err := notespb.NewRootNote(seg)
	if err != nil {
		return nil, err
	}
	if err := n.fill(root); err != nil {
		return nil, err
	}
	return msg.Marshal()
}

func decodeNote(b []byte) (*note, error) {
	msg, err := capnp.Unmarshal(b)
	if err != nil {
		return nil, err
	}
	root, err := notespb.ReadRootNote(msg)
	if err != nil {
		return nil, err
	}
	n := &note{id: root.Id(), created: root.CreatedAt(), updated: root.UpdatedAt()}
	if n.title, err = root.Title(); err != nil {
		return nil, err
	}
	if n.body, err = root.Body(); err != nil {
		return nil, err
	}
	return n, nil
}

// returnNote answers a method whose results are one note.
func returnNote[R interface{ NewNote() (notespb.Note, error) }](alloc func() (R, error), n *note) error {
	res, err := alloc()
	if err != nil {
		return err
	}
	out, err := res.NewNote()
	if err != nil {
		return err
	}
	return n.fill(out)
}

func (n *note) fill(out notespb.Note) error {
	out.SetId(n.id)
	out.SetCreatedAt(n.created)
	out.SetUpdatedAt(n.updated)
	if err := out.SetTitle(n.title); err != nil {
		return err
	}
	return out.SetBody(n.body)
}

func fillList(notes []*note, alloc func(int32) (notespb.Note_List, error)) error {
	l, err := alloc(int32(len(notes)))
	if err != nil {
		return err
	}
	for i, n := range notes {
		if err := n.fill(l.At(i)); err != nil {
			return err
		}
	}
	return nil
}

// saveError explains a failed write. Nothing the call wrote is kept: the
// call fails, so the host discards its whole transaction. The host's reason
// names the limit that was hit (its text is all that crosses the sandbox
// boundary), and it is passed on as is.
func saveError(err error) error {
	msg := err.Error()
	if l := strings.ToLower(msg); strings.Contains(l, "limit") || strings.Contains(l, "quota") {
		return fmt.Errorf("notes: storage limit reached, nothing was saved: %s", msg)
	}
	return fmt.Errorf("notes: saving failed, nothing was saved: %s", msg)
}

// entrySize is what one key-value pair counts against the host's limits.
func entrySize(key string, val []byte) uint64 { return uint64(len(key) + len(val)) }

// Storage access, through the synchronous stubs. Each session call takes
// the storage capability once (guest.Storage lends it: it is not released)
// and passes it down; a stub's results live until its release, so what
// outlives the call is copied.

func get(ctx context.Context, st schema.Storage, key string) ([]byte, bool, error) {
	res, release, err := st.GetSync(ctx, func(p schema.Storage_get_Params) error { return p.SetKey(key) })
	defer release()
	if err != nil {
		return nil, false, fmt.Errorf("notes: reading storage: %w", err)
	}
	if !res.Found() {
		return nil, false, nil
	}
	v, err := res.Value()
	if err != nil {
		return nil, false, fmt.Errorf("notes: reading storage: %w", err)
	}
	// The answer's message is released with the call; keep a copy.
	return append([]byte(nil), v...), true, nil
}

func put(ctx context.Context, st schema.Storage, key string, val []byte) error {
	_, release, err := st.PutSync(ctx, func(p schema.Storage_put_Params) error {
		if err := p.SetKey(key); err != nil {
			return err
		}
		return p.SetValue(val)
	})
	release()
	return err
}

func del(ctx context.Context, st schema.Storage, key string) error {
	_, release, err := st.DeleteSync(ctx, func(p schema.Storage_delete_Params) error { return p.SetKey(key) })
	release()
	return err
}

type entry struct {
	Key   string
	Value []byte
}

func list(ctx context.Context, st schema.Storage, prefix, after string, limit int) ([]entry, error) {
	res, release, err := st.ListSync(ctx, func(p schema.Storage_list_Params) error {
		p.SetLimit(uint32(limit))
		if err := p.SetPrefix(prefix); err != nil {
			return err
		}
		return p.SetAfter(after)
	})
	defer release()
	if err != nil {
		return nil, fmt.Errorf("notes: listing storage: %w", err)
	}
	l, err := res.Entries()
	if err != nil {
		return nil, fmt.Errorf("notes: listing storage: %w", err)
	}
	out := make([]entry, l.Len())
	for i := range out {
		e := l.At(i)
		k, err := e.Key()
		if err != nil {
			return nil, fmt.Errorf("notes: listing storage: %w", err)
		}
		v, err := e.Value()
		if err != nil {
			return nil, fmt.Errorf("notes: listing storage: %w", err)
		}
		out[i] = entry{Key: k, Value: append([]byte(nil), v...)}
	}
	return out, nil
}

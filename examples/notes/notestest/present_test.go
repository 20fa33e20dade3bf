package notestest

import (
	"slices"
	"testing"

	"github.com/gadgetd/gadgetd/examples/notes/notespb"
	"github.com/gadgetd/gadgetd/guest/guesttest"
	"github.com/gadgetd/gadgetd/schema"
)

// person is one entry of Notes.present.
type person struct {
	userID, name string
	role         notespb.Role
}

func present(t *testing.T, s notespb.Notes) ([]person, error) {
	t.Helper()
	f, release := s.Present(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return nil, err
	}
	list, err := res.People()
	if err != nil {
		t.Fatal(err)
	}
	var out []person
	for i := range list.Len() {
		p := list.At(i)
		id, _ := p.UserId()
		name, _ := p.UserName()
		out = append(out, person{id, name, p.Role()})
	}
	return out, nil
}

// present passes on what the session's context says (here guesttest's,
// which answers the sessions open in the test's gadget): each user once,
// in the order they arrived, at their highest role.
func TestPresentSaysWhoTheSessionContextSaysIsHere(t *testing.T) {
	g := guesttest.Start(t, "..")
	ann := notespb.Notes(g.Open(t, guesttest.Caller{UserID: "u_ann", UserName: "ann", Role: schema.Role_owner}))
	bob := notespb.Notes(g.Open(t, guesttest.Caller{UserID: "u_bob", UserName: "bob"}))
	g.Open(t, guesttest.Caller{UserID: "u_bob", UserName: "bob", Role: schema.Role_editor})
	want := []person{{"u_ann", "ann", notespb.Role_owner}, {"u_bob", "bob", notespb.Role_editor}}
	for _, s := range []notespb.Notes{ann, bob} {
		if got, err := present(t, s); err != nil || !slices.Equal(got, want) {
			t.Fatalf("present = %+v, %v; want %+v", got, err, want)
		}
	}
	ann.Release()
	if got, err := present(t, bob); err != nil || !slices.Equal(got, want[1:]) {
		t.Fatalf("present once ann left = %+v, %v; want bob alone", got, err)
	}
}

// On a host that lends no context, the session cannot tell who is here and
// says so.
func TestPresentWithoutASessionContextFailsClearly(t *testing.T) {
	e := newEnv(t, 64<<20)
	s := open(t, e.gadget(), "alice", schema.Role_owner)
	_, err := present(t, s)
	wantErr(t, "present on a bare host", err, "notes: the host lent no session context")
}

package server_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/examples/issues/issuespb"
	"github.com/gadgetd/gadgetd/schema"
)

// bob, an editor of alice's issues gadget, files an issue through his
// session; alice approves it, then sets auto-approval and bob files
// another. Every answer that describes an action names bob by his login
// name beside his id (actions, decide, watchActions), and the audit log
// names whose call each entry was: bob's, alice's, and for an outcome its
// approver, alice or "auto" (no user, no name).
func TestActionsAndAuditEntriesNameTheirUserByLoginName(t *testing.T) {
	h := startIssues(t)
	ws := h.users(t, "alice", "bob")
	alice, bob := ws["alice"], ws["bob"]
	g, id := create(t, alice, "issues")
	if err := bindRepo(t, g, "acme/widgets"); err != nil {
		t.Fatal(err)
	}
	mustShare(t, g, "bob", schema.Role_editor)
	l := &namedListener{heard: make(chan string, 100)}
	w, releaseWatch := alice.WatchActions(testCtx(t), func(p schema.Workspace_watchActions_Params) error {
		return p.SetListener(schema.ActionListener_ServerToClient(l))
	})
	defer releaseWatch()
	if _, err := w.Struct(); err != nil {
		t.Fatal(err)
	}
	alicesOpen, releaseAlices := g.Open(testCtx(t), nil)
	defer releaseAlices()
	if _, err := listIssues(t, issuespb.Issues(alicesOpen.Session())); err != nil {
		t.Fatal(err)
	}
	bobsOpen, releaseBobs := openGadget(t, bob, id).Open(testCtx(t), nil)
	defer releaseBobs()
	bobs := issuespb.Issues(bobsOpen.Session())
	if _, err := listIssues(t, bobs); err != nil {
		t.Fatal(err)
	}

	held := fileIssue(t, bobs, "Filed by bob")
	l.await(t, held+" pending bob")
	af, releaseActions := alice.Actions(testCtx(t), nil)
	defer releaseActions()
	ares, err := af.Struct()
	if err != nil {
		t.Fatal(err)
	}
	actions, _ := ares.Actions()
	if actions.Len() != 1 {
		t.Fatalf("alice's workspace has %d actions, want bob's one", actions.Len())
	}
	if name, _ := actions.At(0).UserName(); name != "bob" {
		t.Fatalf("Workspace.actions names the user of bob's action %q", name)
	}
	df, releaseDecide := alice.Decide(testCtx(t), func(p schema.Workspace_decide_Params) error {
		p.SetApprove(true)
		ids, err := p.NewIds(1)
		if err != nil {
			return err
		}
		return ids.Set(0, held)
	})
	defer releaseDecide()
	dres, err := df.Struct()
	if err != nil {
		t.Fatal(err)
	}
	decisions, _ := dres.Decisions()
	decided, _ := decisions.At(0).Action()
	if name, _ := decided.UserName(); !decisions.At(0).Ok() || name != "bob" {
		t.Fatalf("decide's answer names the user of bob's action %q (ok %v)", name, decisions.At(0).Ok())
	}
	l.await(t, held+" applied bob")

	auto, releaseAuto := g.SetAutoApprove(testCtx(t), func(p schema.Gadget_setAutoApprove_Params) error {
		p.SetOn(true)
		p.SetBinding("repo")
		return p.SetMethod("createIssue")
	})
	defer releaseAuto()
	if _, err := auto.Struct(); err != nil {
		t.Fatal(err)
	}
	l.await(t, fileIssue(t, bobs, "Auto-approved")+" applied bob")

	// bob's list and two files; alice's list, her approval and its
	// outcome; the auto-approved outcome. (An outcome may be recorded
	// before the approval or the call it follows.)
	entries := auditNames(t, alice)
	var names []string
	nameOf := map[string]string{}
	for _, e := range entries {
		names = append(names, e.name)
		if n, ok := nameOf[e.user]; ok && n != e.name {
			t.Fatalf("alice's audit log names user %s both %q and %q", e.user, n, e.name)
		}
		nameOf[e.user] = e.name
	}
	slices.Sort(names)
	autoName, byAuto := nameOf["auto"]
	if want := []string{"", "alice", "alice", "alice", "bob", "bob", "bob"}; !slices.Equal(names, want) || !byAuto || autoName != "" {
		t.Fatalf("alice's audit log: %+v; want bob's three calls, alice's call, approval and its outcome, and an outcome by auto, named by no one", entries)
	}
}

type namedEntry struct{ user, name string }

// auditNames returns the user id and name of each entry of ws's audit log,
// newest first.
func auditNames(t *testing.T, ws schema.Workspace) []namedEntry {
	t.Helper()
	f, release := ws.Audit(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	list, _ := res.Entries()
	var out []namedEntry
	for i := range list.Len() {
		user, _ := list.At(i).User()
		name, _ := list.At(i).UserName()
		out = append(out, namedEntry{user, name})
	}
	return out
}

// namedListener hears each change as "ID STATE USERNAME".
type namedListener struct{ heard chan string }

func (l *namedListener) Changed(ctx context.Context, call schema.ActionListener_changed) error {
	a, err := call.Args().Action()
	if err != nil {
		return err
	}
	id, _ := a.Id()
	name, _ := a.UserName()
	l.heard <- id + " " + a.State().String() + " " + name
	return nil
}

func (l *namedListener) Missed(context.Context, schema.ActionListener_missed) error {
	l.heard <- "missed"
	return nil
}

// await waits for want among what l hears, skipping the changes before it.
func (l *namedListener) await(t *testing.T, want string) {
	t.Helper()
	var heard []string
	for {
		select {
		case c := <-l.heard:
			if c == want {
				return
			}
			heard = append(heard, c)
		case <-time.After(30 * time.Second):
			t.Fatalf("the listener heard %q and not %q", heard, want)
		}
	}
}

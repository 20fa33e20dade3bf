package ledger

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

var ctx = context.Background()

func TestBindRefusesADuplicateNameAndBindingsAreSortedByName(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	bind(t, l, "g1", "alice", "api")
	bind(t, l, "g2", "alice", "web") // another gadget may use the name
	err := l.Bind(ctx, gatekeepers.Binding{GadgetID: "g1", OwnerID: "alice", Name: "web", Kind: "http"})
	mustErr(t, err, ErrExists)
	bs, err := l.Bindings(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].Name != "api" || bs[1].Name != "web" || bs[1].Resource != "https://example.com/" {
		t.Fatalf("bindings = %+v", bs)
	}
	_, err = l.Binding(ctx, "g1", "nope")
	mustErr(t, err, ErrNotFound)
	mustErr(t, err, gatekeepers.ErrNoBinding)
}

func TestBindingsPerGadgetAreBounded(t *testing.T) {
	l := newLedger(t, WithMaxBindings(3))
	for i := range 3 {
		bind(t, l, "g1", "alice", fmt.Sprint("b", i))
	}
	err := l.Bind(ctx, gatekeepers.Binding{GadgetID: "g1", OwnerID: "alice", Name: "b3", Kind: "http"})
	mustErr(t, err, ErrLimit)
	bind(t, l, "g2", "alice", "b3") // another gadget is unaffected
	if _, err := l.Unbind(ctx, "g1", "b0"); err != nil {
		t.Fatal(err)
	}
	bind(t, l, "g1", "alice", "b3") // room again
}

func TestQueueNeedsABinding(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	_, err := l.Queue(ctx, gatekeepers.Action{GadgetID: "g1", Binding: "other", Method: "post"})
	mustErr(t, err, gatekeepers.ErrNoBinding)
	_, err = l.Queue(ctx, gatekeepers.Action{GadgetID: "g2", Binding: "web", Method: "post"})
	mustErr(t, err, gatekeepers.ErrNoBinding)
	// The action's owner comes from the binding, and may not be claimed.
	_, err = l.Queue(ctx, gatekeepers.Action{GadgetID: "g1", Binding: "web", Method: "post", OwnerID: "mallory"})
	mustErr(t, err, ErrInvalid)
	a := queue(t, l, "g1", "web")
	if a.OwnerID != "alice" || a.Kind != "http" || a.State != gatekeepers.Pending || a.Seq != 1 || len(a.ID) < 26 {
		t.Fatalf("queued %+v", a)
	}
	if b := queue(t, l, "g1", "web"); b.Seq != 2 || b.ID == a.ID {
		t.Fatalf("second action %+v", b)
	}
}

func TestOpenActionsPerOwnerAreBounded(t *testing.T) {
	l := newLedger(t, WithMaxOpenActions(3))
	bind(t, l, "g1", "alice", "web")
	bind(t, l, "g2", "bob", "web")
	var ids []string
	for range 3 {
		ids = append(ids, queue(t, l, "g1", "web").ID)
	}
	_, err := l.Queue(ctx, gatekeepers.Action{GadgetID: "g1", Binding: "web", Method: "post"})
	mustErr(t, err, ErrLimit)
	queue(t, l, "g2", "web") // another owner is unaffected
	// An approved action is still open; a rejected one frees its slot.
	decide(t, l, "alice", true, ids[0])
	_, err = l.Queue(ctx, gatekeepers.Action{GadgetID: "g1", Binding: "web", Method: "post"})
	mustErr(t, err, ErrLimit)
	decide(t, l, "alice", false, ids[1])
	queue(t, l, "g1", "web")
}

func TestFinishedActionsPerOwnerAreBounded(t *testing.T) {
	l := newLedger(t, WithMaxFinishedActions(2))
	bind(t, l, "g1", "alice", "web")
	bind(t, l, "g2", "bob", "web")
	bobs := queue(t, l, "g2", "web")
	decide(t, l, "bob", false, bobs.ID)
	var ids []string
	for range 4 {
		a := queue(t, l, "g1", "web")
		decide(t, l, "alice", false, a.ID)
		ids = append(ids, a.ID)
	}
	got, err := l.Actions(ctx, "alice", Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != ids[2] || got[1].ID != ids[3] {
		t.Fatalf("kept %d actions, want the last two", len(got))
	}
	_, err = l.Action(ctx, "alice", ids[0])
	mustErr(t, err, ErrNotFound)
	if state(t, l, "bob", bobs.ID) != gatekeepers.Rejected { // another owner's are kept
		t.Fatal("bob's action was dropped")
	}
}

func TestAuditEntriesPerOwnerAreBounded(t *testing.T) {
	l := newLedger(t, WithMaxAuditEntries(5))
	if err := l.Record(ctx, Entry{OwnerID: "bob", Describe: "bob's"}); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if err := l.Record(ctx, Entry{OwnerID: "alice", GadgetID: fmt.Sprint("g", i%2), Describe: fmt.Sprint("call ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	es, err := l.Audit(ctx, "alice", AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Describe)
	}
	if want := []string{"call 11", "call 10", "call 9", "call 8", "call 7"}; !slices.Equal(got, want) {
		t.Fatalf("audit = %q, want %q", got, want)
	}
	// Paging and the gadget filter.
	es, _ = l.Audit(ctx, "alice", AuditFilter{GadgetID: "g1", BeforeSeq: es[0].Seq, Limit: 1})
	if len(es) != 1 || es[0].Describe != "call 9" {
		t.Fatalf("page = %+v", es)
	}
	es, _ = l.Audit(ctx, "bob", AuditFilter{})
	if len(es) != 1 || es[0].Describe != "bob's" {
		t.Fatalf("bob's audit = %+v", es)
	}
}

func TestAuditTextIsCutToOneKiBOnARuneBoundary(t *testing.T) {
	l := newLedger(t)
	long := "x" + strings.Repeat("é", 2000) // 2-byte runes, offset by one
	if err := l.Record(ctx, Entry{OwnerID: "alice", Describe: long, Outcome: long, Method: long}); err != nil {
		t.Fatal(err)
	}
	es, _ := l.Audit(ctx, "alice", AuditFilter{})
	for _, s := range []string{es[0].Describe, es[0].Outcome, es[0].Method} {
		if len(s) > 1024 || len(s) < 1020 || !utf8.ValidString(s) || !strings.HasPrefix(long, s) {
			t.Fatalf("kept %d bytes, valid UTF-8 %v", len(s), utf8.ValidString(s))
		}
	}
}

func TestPayloadIsBounded(t *testing.T) {
	l := newLedger(t, WithMaxPayload(10))
	bind(t, l, "g1", "alice", "web")
	_, err := l.Queue(ctx, gatekeepers.Action{GadgetID: "g1", Binding: "web", Method: "post", Payload: make([]byte, 11)})
	mustErr(t, err, ErrLimit)
	if _, err := l.Queue(ctx, gatekeepers.Action{GadgetID: "g1", Binding: "web", Method: "post", Payload: make([]byte, 10)}); err != nil {
		t.Fatal(err)
	}
}

func TestAnotherOwnersActionIsNotFoundNorDecidable(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	a := queue(t, l, "g1", "web")
	_, errOther := l.Action(ctx, "mallory", a.ID)
	_, errMissing := l.Action(ctx, "mallory", "nosuchid")
	mustErr(t, errOther, ErrNotFound)
	if strings.ReplaceAll(errOther.Error(), a.ID, "ID") != strings.ReplaceAll(errMissing.Error(), "nosuchid", "ID") {
		t.Fatalf("another owner's id (%v) is told apart from a missing one (%v)", errOther, errMissing)
	}
	ds, err := l.Decide(ctx, "mallory", []string{a.ID}, true, "mallory")
	if err != nil {
		t.Fatal(err)
	}
	mustErr(t, ds[0].Err, ErrNotFound)
	if ds[0].Action.ID != "" {
		t.Fatal("a refused decision showed the action")
	}
	if as, _ := l.Actions(ctx, "mallory", Filter{}); len(as) != 0 {
		t.Fatalf("mallory lists %d actions", len(as))
	}
	if state(t, l, "alice", a.ID) != gatekeepers.Pending {
		t.Fatal("mallory's decision changed alice's action")
	}
}

func TestDecideGivesEachIDItsOwnOutcome(t *testing.T) {
	noon := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	l := newLedger(t, WithClock(func() time.Time { return noon }))
	bind(t, l, "g1", "alice", "web")
	a, b := queue(t, l, "g1", "web"), queue(t, l, "g1", "web")
	decide(t, l, "alice", false, b.ID)
	ds, err := l.Decide(ctx, "alice", []string{a.ID, b.ID, "nosuchid", a.ID}, true, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if ds[0].Err != nil || ds[0].Action.State != gatekeepers.Approved || ds[0].Action.DecidedBy != "alice" || !ds[0].Action.DecidedAt.Equal(noon) {
		t.Fatalf("first: %+v", ds[0])
	}
	mustErr(t, ds[1].Err, ErrDecided)
	mustErr(t, ds[2].Err, ErrNotFound)
	mustErr(t, ds[3].Err, ErrDecided) // the same id twice: decided once
	_, err = l.Decide(ctx, "alice", make([]string, 1001), true, "alice")
	mustErr(t, err, ErrLimit)
}

func TestUnbindRejectsTheBindingsOpenActions(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	bind(t, l, "g1", "alice", "api")
	pending, approved := queue(t, l, "g1", "web"), queue(t, l, "g1", "web")
	other := queue(t, l, "g1", "api")
	decide(t, l, "alice", true, approved.ID)
	b, err := l.Unbind(ctx, "g1", "web")
	if err != nil || b.Name != "web" {
		t.Fatalf("unbind = %+v, %v", b, err)
	}
	for _, id := range []string{pending.ID, approved.ID} {
		a, _ := l.Action(ctx, "alice", id)
		if a.State != gatekeepers.Rejected || a.DecidedBy != "unbound" {
			t.Fatalf("after unbind: %s is %s by %q", id, stateName(a.State), a.DecidedBy)
		}
	}
	if state(t, l, "alice", other.ID) != gatekeepers.Pending {
		t.Fatal("another binding's action was touched")
	}
	_, err = l.Unbind(ctx, "g1", "web")
	mustErr(t, err, ErrNotFound)
	// A new binding of the same name starts afresh: nothing to overlay.
	bind(t, l, "g1", "alice", "web")
	if p, _ := l.Pending(ctx, "g1", "web"); len(p) != 0 {
		t.Fatalf("rebound binding has %d pending actions", len(p))
	}
}

func TestDeleteGadgetRejectsOpenActionsAndKeepsTheAudit(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	bind(t, l, "g1", "alice", "api")
	a := queue(t, l, "g1", "api")
	if err := l.Record(ctx, Entry{OwnerID: "alice", GadgetID: "g1", Describe: "a call"}); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteGadget(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	if bs, _ := l.Bindings(ctx, "g1"); len(bs) != 0 {
		t.Fatalf("%d bindings left", len(bs))
	}
	if state(t, l, "alice", a.ID) != gatekeepers.Rejected {
		t.Fatal("open action not rejected")
	}
	if es, _ := l.Audit(ctx, "alice", AuditFilter{GadgetID: "g1"}); len(es) != 1 {
		t.Fatalf("audit has %d entries, want 1", len(es))
	}
	if err := l.DeleteGadget(ctx, "g1"); err != nil {
		t.Fatalf("deleting again: %v", err)
	}
}

func TestAutoApproveApprovesOnlyThatMethodOfThatBinding(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	bind(t, l, "g1", "alice", "api")
	if err := l.SetAutoApprove(ctx, "g1", "web", "post", true); err != nil {
		t.Fatal(err)
	}
	a := queue(t, l, "g1", "web")
	if a.State != gatekeepers.Approved || a.DecidedBy != "auto" {
		t.Fatalf("auto-approved method: %s by %q", stateName(a.State), a.DecidedBy)
	}
	put, _ := l.Queue(ctx, gatekeepers.Action{GadgetID: "g1", Binding: "web", Method: "put"})
	if put.State != gatekeepers.Pending {
		t.Fatal("another method was auto-approved")
	}
	if queue(t, l, "g1", "api").State != gatekeepers.Pending {
		t.Fatal("another binding was auto-approved")
	}
	if err := l.SetAutoApprove(ctx, "g1", "web", "post", false); err != nil {
		t.Fatal(err)
	}
	if queue(t, l, "g1", "web").State != gatekeepers.Pending {
		t.Fatal("auto-approval was not turned off")
	}
	mustErr(t, l.SetAutoApprove(ctx, "g1", "nope", "post", true), gatekeepers.ErrNoBinding)
}

func TestBeginAdmitsOnlyTheBindingsApprovedHead(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	first, second, third := queue(t, l, "g1", "web"), queue(t, l, "g1", "web"), queue(t, l, "g1", "web")
	decide(t, l, "alice", true, second.ID, third.ID)
	_, err := l.Begin(ctx, second.ID) // behind a pending one
	mustErr(t, err, ErrState)
	_, err = l.Begin(ctx, first.ID) // not approved
	mustErr(t, err, ErrState)
	decide(t, l, "alice", false, first.ID) // a rejected one does not block
	_, err = l.Begin(ctx, third.ID)        // second is the head now
	mustErr(t, err, ErrState)
	a, err := l.Begin(ctx, second.ID)
	if err != nil || a.State != gatekeepers.Applying {
		t.Fatalf("begin second: %+v, %v", a, err)
	}
	_, err = l.Begin(ctx, second.ID) // exactly once
	mustErr(t, err, ErrState)
	if err := l.Finish(ctx, second.ID, gatekeepers.Outcome{Describe: "ok"}, false); err != nil {
		t.Fatal(err)
	}
	mustErr(t, l.Finish(ctx, second.ID, gatekeepers.Outcome{}, false), ErrState)
	if _, err := l.Begin(ctx, third.ID); err != nil {
		t.Fatal(err)
	}
	// The outcome is in the audit log.
	es, _ := l.Audit(ctx, "alice", AuditFilter{})
	if len(es) != 1 || es[0].ActionID != second.ID || es[0].Outcome != "ok" || es[0].UserID != "owner-user" {
		t.Fatalf("audit = %+v", es)
	}
}

func TestPendingIsWhatTheGadgetWasPromised(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	a, b, c := queue(t, l, "g1", "web"), queue(t, l, "g1", "web"), queue(t, l, "g1", "web")
	decide(t, l, "alice", true, a.ID)
	decide(t, l, "alice", false, b.ID)
	if _, err := l.Begin(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	p, err := l.Pending(ctx, "g1", "web")
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 2 || p[0].ID != a.ID || p[1].ID != c.ID {
		t.Fatalf("pending = %+v", p)
	}
	if err := l.Finish(ctx, a.ID, gatekeepers.Outcome{}, false); err != nil {
		t.Fatal(err)
	}
	if p, _ := l.Pending(ctx, "g1", "web"); len(p) != 1 || p[0].ID != c.ID {
		t.Fatalf("pending after apply = %+v", p)
	}
}

func TestActionsFilterAndPage(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	bind(t, l, "g2", "alice", "web")
	var ids []string
	for i := range 6 {
		ids = append(ids, queue(t, l, fmt.Sprint("g", 1+i%2), "web").ID)
	}
	decide(t, l, "alice", false, ids[0])
	as, _ := l.Actions(ctx, "alice", Filter{GadgetID: "g1", States: []gatekeepers.ActionState{gatekeepers.Pending}, Limit: 1})
	if len(as) != 1 || as[0].ID != ids[2] {
		t.Fatalf("first page = %+v", as)
	}
	as, _ = l.Actions(ctx, "alice", Filter{GadgetID: "g1", AfterSeq: as[0].Seq})
	if len(as) != 1 || as[0].ID != ids[4] {
		t.Fatalf("second page = %+v", as)
	}
}

func TestRebindWaitsForThePreviousBindingsApplyingAction(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	a := queue(t, l, "g1", "web")
	decide(t, l, "alice", true, a.ID)
	if _, err := l.Begin(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Unbind(ctx, "g1", "web"); err != nil {
		t.Fatal(err)
	}
	if state(t, l, "alice", a.ID) != gatekeepers.Applying {
		t.Fatal("unbind touched an action being applied")
	}
	// Whoever applies it looks the binding up: it must not find a new one.
	err := l.Bind(ctx, gatekeepers.Binding{GadgetID: "g1", OwnerID: "alice", Name: "web", Kind: "http", Resource: "https://elsewhere.example/"})
	mustErr(t, err, ErrExists)
	_, err = l.Binding(ctx, "g1", "web")
	mustErr(t, err, gatekeepers.ErrNoBinding)
	if err := l.Finish(ctx, a.ID, gatekeepers.Outcome{}, true); err != nil {
		t.Fatal(err)
	}
	bind(t, l, "g1", "alice", "web")
}

// An outside attacker's gadget pushed the record of its own action out of
// the audit log by reading 10,000 times. Entries about actions and reads
// are bounded apart: reads, however many, drop only older reads, and the
// action's entries stay, in their place among the newest reads.
func TestReadsCannotPushAnActionsEntriesOutOfTheAuditLog(t *testing.T) {
	l := newLedger(t, WithMaxAuditEntries(5))
	for _, outcome := range []string{"queued for approval", "approved"} {
		if err := l.Record(ctx, Entry{OwnerID: "alice", GadgetID: "g1", ActionID: "a1", Outcome: outcome}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		if err := l.Record(ctx, Entry{OwnerID: "alice", GadgetID: "g2", Describe: fmt.Sprint("read ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	es, err := l.Audit(ctx, "alice", AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Describe+e.Outcome)
	}
	want := []string{"read 19", "read 18", "read 17", "read 16", "read 15", "approved", "queued for approval"}
	if !slices.Equal(got, want) {
		t.Fatalf("audit = %q, want %q", got, want)
	}
	// Paging walks both, newest first.
	page, _ := l.Audit(ctx, "alice", AuditFilter{BeforeSeq: es[4].Seq, Limit: 1})
	if len(page) != 1 || page[0].Outcome != "approved" {
		t.Fatalf("the page before the oldest read kept: %+v", page)
	}
	// Entries about actions are bounded too.
	for i := range 10 {
		if err := l.Record(ctx, Entry{OwnerID: "alice", ActionID: fmt.Sprint("b", i), Outcome: "queued"}); err != nil {
			t.Fatal(err)
		}
	}
	es, _ = l.Audit(ctx, "alice", AuditFilter{Limit: 100})
	if len(es) != 10 {
		t.Fatalf("%d entries kept, want 5 reads and 5 about actions", len(es))
	}
}

// An outside attacker grew one workspace's database to 3 GB with rejected
// actions of 190 KB each, kept with their payloads. A finished action
// keeps none: nothing will make its real call again.
func TestAFinishedActionKeepsNoPayload(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "repo")
	big := bytes.Repeat([]byte("x"), 100<<10)
	a, err := l.Queue(ctx, gatekeepers.Action{GadgetID: "g1", OwnerID: "alice", Binding: "repo", Method: "createIssue", Payload: big})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Action(ctx, "alice", a.ID); len(got.Payload) != len(big) {
		t.Fatalf("a pending action keeps %d bytes of payload, want all %d", len(got.Payload), len(big))
	}
	if _, err := l.Decide(ctx, "alice", []string{a.ID}, false, "alice"); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Action(ctx, "alice", a.ID); got.State != gatekeepers.Rejected || len(got.Payload) != 0 {
		t.Fatalf("a rejected action: %v with %d bytes of payload", got.State, len(got.Payload))
	}
}

package desk_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/desk"
	gkhttp "github.com/gadgetd/gadgetd/gatekeepers/http"
	"github.com/gadgetd/gadgetd/gatekeepers/http/httppb"
)

// site is a loopback HTTP server that counts what reaches it.
type site struct {
	*httptest.Server
	gets, posts atomic.Int32
}

func newSite(t *testing.T) *site {
	s := &site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			s.gets.Add(1)
			fmt.Fprintf(w, "hello from %s", r.URL.Path)
		case http.MethodPost:
			s.posts.Add(1)
			w.WriteHeader(http.StatusCreated)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// fixture is a Desk over a real bbolt file with one http service whose
// prefix is the site's /api/.
type fixture struct {
	desk *desk.Desk
	site *site
	g    desk.Gadget
}

func newFixture(t *testing.T, opts ...desk.Option) *fixture {
	t.Helper()
	s := newSite(t)
	db, err := bolt.Open(filepath.Join(t.TempDir(), "gadgetd.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	prefix := s.URL + "/api/"
	d, err := desk.Open(context.Background(), db, []gatekeepers.Kind{gkhttp.Kind()}, []desk.Service{{
		Name: "site", Kind: "http",
		Config: gatekeepers.ServiceConfig{
			Description: "the test site",
			Settings:    map[string]any{"prefixes": []any{prefix}, "allow_private": []any{prefix}},
		},
	}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Close(ctx)
		db.Close()
	})
	return &fixture{desk: d, site: s, g: desk.Gadget{ID: "g1", OwnerID: "alice"}}
}

func (f *fixture) bind(t *testing.T, name, path string) {
	t.Helper()
	if _, err := f.desk.Bind(context.Background(), f.g, "alice", name, "site", f.site.URL+path); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) gatekeeper(t *testing.T, name string) httppb.Http {
	t.Helper()
	c, err := f.desk.Gatekeeper(context.Background(), f.g, "alice", name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Release)
	return httppb.Http(c)
}

func get(h httppb.Http, url string) (string, error) {
	f, release := h.Get(context.Background(), func(p httppb.Http_get_Params) error { return p.SetUrl(url) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		return "", err
	}
	r, err := res.Response()
	if err != nil {
		return "", err
	}
	body, err := r.Body()
	return string(body), err
}

func send(h httppb.Http, url string) (string, error) {
	f, release := h.Send(context.Background(), func(p httppb.Http_send_Params) error {
		if err := p.SetMethod("POST"); err != nil {
			return err
		}
		if err := p.SetBody([]byte("x")); err != nil {
			return err
		}
		return p.SetUrl(url)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return "", err
	}
	a, err := res.Action()
	if err != nil {
		return "", err
	}
	return a.ActionId()
}

func waitState(t *testing.T, d *desk.Desk, owner, id string, want gatekeepers.ActionState) gatekeepers.Action {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		actions, err := d.Actions(context.Background(), owner, desk.ActionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range actions {
			if a.ID == id && a.State == want {
				return a
			}
		}
		if time.Now().After(end) {
			t.Fatalf("action %s never reached state %v: %+v", id, want, actions)
		}
	}
}

// TestANameThatIsNotBoundDoesNotExist: a gadget asking for a binding it
// does not have gets ErrNoBinding, whether the name never existed or was
// unbound, and a bound name of another gadget is not its.
func TestANameThatIsNotBoundDoesNotExist(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.bind(t, "api", "/api/")
	other := desk.Gadget{ID: "g2", OwnerID: "alice"}
	if _, err := f.desk.Gatekeeper(ctx, other, "alice", "api"); !errors.Is(err, gatekeepers.ErrNoBinding) {
		t.Fatalf("another gadget's binding: %v, want ErrNoBinding", err)
	}
	if _, err := f.desk.Gatekeeper(ctx, f.g, "alice", "never"); !errors.Is(err, gatekeepers.ErrNoBinding) {
		t.Fatalf("a name never bound: %v, want ErrNoBinding", err)
	}
	if err := f.desk.Unbind(ctx, f.g.ID, "api"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.desk.Gatekeeper(ctx, f.g, "alice", "api"); !errors.Is(err, gatekeepers.ErrNoBinding) {
		t.Fatalf("an unbound name: %v, want ErrNoBinding", err)
	}
}

// TestEveryCallIsInTheAuditLogWithItsOutcome: a read that succeeds and
// one the binding refuses (outside its prefix) are both in the owner's
// audit log, newest first, with what they were and how they ended; the
// refused one never reached the site.
func TestEveryCallIsInTheAuditLogWithItsOutcome(t *testing.T) {
	f := newFixture(t)
	f.bind(t, "api", "/api/")
	h := f.gatekeeper(t, "api")
	if body, err := get(h, f.site.URL+"/api/items"); err != nil || body != "hello from /api/items" {
		t.Fatalf("get under the prefix: %q, %v", body, err)
	}
	if _, err := get(h, f.site.URL+"/admin"); err == nil {
		t.Fatal("get outside the prefix succeeded")
	}
	if n := f.site.gets.Load(); n != 1 {
		t.Fatalf("the site saw %d gets, want 1", n)
	}
	entries, err := f.desk.Audit(context.Background(), "alice", desk.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("audit log has %d entries, want 2: %+v", len(entries), entries)
	}
	refused, ok := entries[0], entries[1]
	if ok.Method != "get" || ok.Failed || ok.Outcome != "ok" || !strings.Contains(ok.Describe, "/api/items") || ok.GadgetID != "g1" || ok.Binding != "api" || ok.UserID != "alice" {
		t.Fatalf("the good get's entry: %+v", ok)
	}
	if refused.Method != "get" || !refused.Failed || refused.Outcome == "" {
		t.Fatalf("the refused get's entry: %+v", refused)
	}
}

// TestAnActionWaitsForApprovalAndIsAppliedOnce: a POST through the
// binding is queued, not sent; approving it sends it exactly once, and
// the audit log has the call, the decision and the outcome.
func TestAnActionWaitsForApprovalAndIsAppliedOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.bind(t, "api", "/api/")
	h := f.gatekeeper(t, "api")
	id, err := send(h, f.site.URL+"/api/items")
	if err != nil || id == "" {
		t.Fatalf("send: %q, %v", id, err)
	}
	pending := waitState(t, f.desk, "alice", id, gatekeepers.Pending)
	// The approver sees the whole request, body included.
	if got := f.desk.Details(pending); !strings.Contains(got, "POST ") || !strings.Contains(got, "/api/items") || !strings.HasSuffix(got, "\nx") {
		t.Fatalf("the action's details: %q", got)
	}
	time.Sleep(100 * time.Millisecond)
	if n := f.site.posts.Load(); n != 0 {
		t.Fatalf("the site saw %d posts before approval", n)
	}
	decisions, err := f.desk.Decide(ctx, "alice", []string{id, id}, true, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if decisions[0].Err != nil || decisions[1].Err == nil {
		t.Fatalf("deciding one action twice in one call: %+v", decisions)
	}
	a := waitState(t, f.desk, "alice", id, gatekeepers.Applied)
	if n := f.site.posts.Load(); n != 1 {
		t.Fatalf("the site saw %d posts after approval, want 1", n)
	}
	if !strings.Contains(a.Outcome.Describe, "201") {
		t.Fatalf("outcome %q does not say what the site answered", a.Outcome.Describe)
	}
	entries, err := f.desk.Audit(ctx, "alice", desk.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, e := range entries {
		if e.ActionID == id {
			outcomes = append(outcomes, e.Outcome)
		}
	}
	if len(outcomes) != 3 || !strings.Contains(outcomes[0], "201 Created") || !strings.HasPrefix(outcomes[1], "approved") || outcomes[2] != "queued for approval" {
		t.Fatalf("the action's audit entries, newest first: %q", outcomes)
	}
}

// TestAnotherOwnersActionsCannotBeSeenOrDecided: bob neither lists nor
// decides alice's action, which stays pending.
func TestAnotherOwnersActionsCannotBeSeenOrDecided(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.bind(t, "api", "/api/")
	id, err := send(f.gatekeeper(t, "api"), f.site.URL+"/api/items")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.desk.Actions(ctx, "bob", desk.ActionFilter{}); err != nil || len(got) != 0 {
		t.Fatalf("bob's actions: %+v, %v", got, err)
	}
	decisions, err := f.desk.Decide(ctx, "bob", []string{id}, true, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if decisions[0].Err == nil {
		t.Fatal("bob approved alice's action")
	}
	waitState(t, f.desk, "alice", id, gatekeepers.Pending)
}

// TestUnbindingRevokesEveryReferenceAndRejectsItsActions: a capability the
// gadget kept fails once its binding is removed, with a reason, before
// reaching the site; and its pending action is rejected, never sent.
func TestUnbindingRevokesEveryReferenceAndRejectsItsActions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.bind(t, "api", "/api/")
	kept := f.gatekeeper(t, "api")
	second := f.gatekeeper(t, "api")
	id, err := send(kept, f.site.URL+"/api/items")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.desk.Unbind(ctx, f.g.ID, "api"); err != nil {
		t.Fatal(err)
	}
	for _, h := range []httppb.Http{kept, second} {
		if _, err := get(h, f.site.URL+"/api/items"); err == nil || !strings.Contains(err.Error(), "binding was removed") {
			t.Fatalf("a kept capability after unbind: %v", err)
		}
	}
	if n := f.site.gets.Load(); n != 0 {
		t.Fatalf("the site saw %d gets through a revoked binding", n)
	}
	waitState(t, f.desk, "alice", id, gatekeepers.Rejected)
	// Bound again under the same name, the old references stay dead.
	f.bind(t, "api", "/api/")
	if _, err := get(kept, f.site.URL+"/api/items"); err == nil {
		t.Fatal("a capability of the old binding works again after a new bind")
	}
}

// TestRemovingTheGadgetRevokesItsGatekeepers: after RemoveGadget the
// gadget's capabilities fail and its bindings are gone.
func TestRemovingTheGadgetRevokesItsGatekeepers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.bind(t, "api", "/api/")
	h := f.gatekeeper(t, "api")
	if err := f.desk.RemoveGadget(ctx, f.g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := get(h, f.site.URL+"/api/items"); err == nil || !strings.Contains(err.Error(), "gadget was removed") {
		t.Fatalf("after removal: %v", err)
	}
	if bs, err := f.desk.Bindings(ctx, f.g.ID); err != nil || len(bs) != 0 {
		t.Fatalf("bindings after removal: %+v, %v", bs, err)
	}
}

// TestABindingGrantsOnlyWhatItsServiceAllows: a resource outside the
// service's prefixes, an unknown service and a bad name are refused.
func TestABindingGrantsOnlyWhatItsServiceAllows(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, tc := range []struct{ name, service, resource, want string }{
		{"api", "site", f.site.URL + "/admin/", "does not grant"},
		{"api", "nope", f.site.URL + "/api/", `no service "nope"`},
		{"Bad Name", "site", f.site.URL + "/api/", "binding name"},
	} {
		if _, err := f.desk.Bind(ctx, f.g, "alice", tc.name, tc.service, tc.resource); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Bind(%q, %q, %q): %v, want an error containing %q", tc.name, tc.service, tc.resource, err, tc.want)
		}
	}
}

// TestAMethodWithoutADeclaredEffectIsRefusedAtOpen: a kind must declare
// every method of its interface an observation or an action, and only
// those, and a kind with actions must render their details for the human
// deciding: a desk with a kind that does not will not open.
func TestAMethodWithoutADeclaredEffectIsRefusedAtOpen(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "gadgetd.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		edit func(*gatekeepers.Kind)
		want string
	}{
		{func(k *gatekeepers.Kind) { delete(k.Methods, "send") }, `method "send" has no declared effect`},
		{func(k *gatekeepers.Kind) { delete(k.Methods, "describe") }, `method "describe" has no declared effect`},
		{func(k *gatekeepers.Kind) { k.Methods["fly"] = gatekeepers.Act }, "does not have: fly"},
		{func(k *gatekeepers.Kind) { k.Details = nil }, "has actions but no Details"},
	} {
		k := gkhttp.Kind()
		tc.edit(&k)
		_, err := desk.Open(context.Background(), db, []gatekeepers.Kind{k}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open: %v, want an error containing %q", err, tc.want)
		}
	}
}

package desk_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/desk"
	gkhttp "github.com/gadgetd/gadgetd/gatekeepers/http"
	"github.com/gadgetd/gadgetd/gatekeepers/http/httppb"
)

// A gadget's binding to one URL prefix: a POST through it waits for the
// owner, who approves it; then it is sent, once, and the audit log has
// each step.
func Example() {
	ctx := context.Background()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	}))
	defer site.Close()
	dir, _ := os.MkdirTemp("", "desk-example")
	defer os.RemoveAll(dir)
	db, _ := bolt.Open(filepath.Join(dir, "gadgetd.db"), 0o600, nil)
	defer db.Close()

	prefix := site.URL + "/api/"
	d, err := desk.Open(ctx, db, []gatekeepers.Kind{gkhttp.Kind()}, []desk.Service{{
		Name: "site", Kind: "http",
		Config: gatekeepers.ServiceConfig{Settings: map[string]any{
			"prefixes": []any{prefix}, "allow_private": []any{prefix}, // a loopback test server
		}},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close(ctx)

	g := desk.Gadget{ID: "g1", OwnerID: "alice"}
	if _, err := d.Bind(ctx, g, "alice", "api", "site", prefix); err != nil {
		fmt.Println(err)
		return
	}
	c, _ := d.Gatekeeper(ctx, g, "alice", "api") // what Host.gatekeeper("api") hands the gadget
	api := httppb.Http(c)
	defer api.Release()
	f, release := api.Send(ctx, func(p httppb.Http_send_Params) error {
		p.SetMethod("POST")
		return p.SetUrl(prefix + "items")
	})
	res, _ := f.Struct()
	pending, _ := res.Action()
	id, _ := pending.ActionId()
	release()

	waiting, _ := d.Actions(ctx, "alice", desk.ActionFilter{States: []gatekeepers.ActionState{gatekeepers.Pending}})
	fmt.Println("waiting:", len(waiting))
	d.Decide(ctx, "alice", []string{id}, true, "alice")
	for {
		a, _ := d.Actions(ctx, "alice", desk.ActionFilter{})
		if a[0].State == gatekeepers.Applied {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	entries, _ := d.Audit(ctx, "alice", desk.AuditFilter{})
	for i := len(entries) - 1; i >= 0; i-- { // oldest first
		fmt.Printf("%s: %s\n", entries[i].Method, strings.ReplaceAll(entries[i].Outcome, site.URL, "SITE"))
	}
	// Output:
	// waiting: 1
	// send: queued for approval
	// send: approved: POST "SITE/api/items" (0 bytes)
	// send: POST "SITE/api/items" (0 bytes): 201 Created
}

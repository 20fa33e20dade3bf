package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

// The transport counts the capabilities a connection holds by mirroring
// go-capnp's export table from the messages that pass; an honest client
// that releases what it is done with must never be cut off by it, however
// long it runs. Here the bound is 20 and the client takes 300 capabilities,
// a few at a time.
func TestAClientThatReleasesWhatItGetsIsNeverCutOffByTheExportBound(t *testing.T) {
	h := start(t, t.TempDir(), server.WithMaxExports(20))
	// 300 calls under -race beside a CPU hog took over 30 s: a hang guard.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ws := h.login(t, h.token("alice"))
	_, id := create(t, ws, "counter")
	for i := range 100 {
		of, r1 := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
		sf, r2 := of.Gadget().Open(ctx, nil)
		v, err := countertest.Increment(ctx, counterpb.Counter(sf.Session()))
		r2()
		r1()
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if v != int64(i+1) {
			t.Fatalf("round %d: counter = %d", i, v)
		}
	}
}

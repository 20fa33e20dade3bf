package server_test

import (
	"slices"
	"testing"

	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
)

// A listing is authority: each entry's Gadget capability works, is the
// gadget the entry describes, and is released with the listing. (With
// go-capnp's unpatched reply release, all but one of a listing's
// capabilities leaked, and the package's leak check failed the binary.)
func TestListedGadgetsAreTheirCapabilities(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	var created []string
	for range 3 {
		_, id := create(t, ws, "counter")
		created = append(created, id)
	}
	for range 3 { // listings released in turn leave nothing behind
		f, release := ws.Gadgets(testCtx(t), nil)
		res, err := f.Struct()
		if err != nil {
			t.Fatal(err)
		}
		list, err := res.Gadgets()
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for i := range list.Len() {
			info, _ := list.At(i).Info()
			id, _ := info.Id()
			listed = append(listed, id)
			// The capability is the entry's gadget: its info names the id.
			g := list.At(i).Gadget()
			gf, releaseInfo := g.Info(testCtx(t), nil)
			got, err := gf.Struct()
			if err != nil {
				t.Fatalf("listed gadget %s: %v", id, err)
			}
			gotInfo, _ := got.Info()
			if gotID, _ := gotInfo.Id(); gotID != id {
				t.Fatalf("the capability listed with %s is gadget %s", id, gotID)
			}
			releaseInfo()
		}
		if !slices.Equal(listed, created) {
			t.Fatalf("listed %v, want %v in creation order", listed, created)
		}
		// A listed capability opens sessions like one from open.
		if _, err := countertest.Increment(testCtx(t), session(t, list.At(0).Gadget())); err != nil {
			t.Fatalf("a session of a listed gadget: %v", err)
		}
		release()
	}
}

package server_test

import (
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

// A bundle far larger than the connection's message limit installs as a
// stream of small writes; the same bundle in one installBlueprint message
// costs the sender its connection, and the server serves on.
func TestABlueprintStreamsInChunksUnderTheMessageLimit(t *testing.T) {
	const messageLimit = 1 << 20
	h := start(t, t.TempDir(), server.WithMaxMessageSize(messageLimit))
	token := h.token("alice")
	b := *blueprinttest.Bundle(t, blueprinttest.TestCounter)
	b.Name = "my-counter"
	bundle, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(bundle) <= messageLimit {
		t.Fatalf("the bundle (%d bytes) fits in one message: this test proves nothing", len(bundle))
	}
	ws := h.login(t, token)
	info, release, err := client.UploadBlueprint(testCtx(t), ws, bundle)
	if err != nil {
		t.Fatalf("uploading %d bytes: %v", len(bundle), err)
	}
	name, _ := info.Name()
	release()
	if name != "my-counter" {
		t.Errorf("installed %q", name)
	}
	create(t, ws, "my-counter")

	b.Version = "2"
	f, release2 := h.login(t, token).InstallBlueprint(testCtx(t), func(p schema.Workspace_installBlueprint_Params) error {
		bp, err := p.NewBundle()
		if err != nil {
			return err
		}
		return b.Fill(bp)
	})
	defer release2()
	if _, err := f.Struct(); err == nil {
		t.Errorf("a %d-byte message passed a %d-byte limit", len(bundle), messageLimit)
	}
	h.requireServing(t, token)
}

func TestUploadsAreBoundedBySizePerUserAndByWhatWasAnnounced(t *testing.T) {
	h := start(t, t.TempDir(), server.WithUploadLimits(2, 0))
	ctx := testCtx(t)
	ws := h.login(t, h.token("alice"))
	begin := func(size uint64) (schema.BlueprintUpload, error) {
		f, release := ws.UploadBlueprint(ctx, func(p schema.Workspace_uploadBlueprint_Params) error {
			p.SetSize(size)
			return nil
		})
		defer release()
		res, err := f.Struct()
		if err != nil {
			return schema.BlueprintUpload{}, err
		}
		up := res.Upload().AddRef()
		t.Cleanup(up.Release)
		return up, nil
	}
	write := func(up schema.BlueprintUpload, n int) error {
		if err := up.Write(ctx, func(p schema.BlueprintUpload_write_Params) error { return p.SetChunk(make([]byte, n)) }); err != nil {
			return err
		}
		return up.WaitStreaming()
	}
	finish := func(up schema.BlueprintUpload) error {
		f, release := up.Finish(ctx, nil)
		defer release()
		_, err := f.Struct()
		return err
	}

	for _, size := range []uint64{0, 1 << 40} {
		if _, err := begin(size); err == nil || !strings.Contains(err.Error(), "must be 1 to") {
			t.Errorf("an upload of %d bytes: %v", size, err)
		}
	}

	short, err := begin(100)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(short, 60); err != nil {
		t.Fatal(err)
	}
	if err := finish(short); err == nil || !strings.Contains(err.Error(), "60 of the announced 100 bytes") {
		t.Errorf("finishing a short upload: %v", err)
	}

	over, err := begin(100)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(over, 101); err == nil || !strings.Contains(err.Error(), "past the announced size") {
		t.Errorf("writing past the announced size: %v", err)
	}
	if err := finish(over); err == nil {
		t.Errorf("an upload that failed could still be finished")
	}

	big, err := begin(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(big, server.MaxUploadChunk+1); err == nil || !strings.Contains(err.Error(), "the limit is") {
		t.Errorf("a chunk over the limit: %v", err)
	}

	// Two uploads are open (over and big failed, which freed them; short
	// finished). Hold two, and a third is refused as overloaded.
	if _, err := begin(10); err != nil {
		t.Fatal(err)
	}
	held, err := begin(10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := begin(10); exc.TypeOf(err) != exc.Overloaded || !strings.Contains(err.Error(), "the limit is 2") {
		t.Errorf("a third open upload: %v, want overloaded naming the limit", err)
	}
	// Another user has slots of their own.
	other := h.login(t, h.token("bob"))
	f, release := other.UploadBlueprint(ctx, func(p schema.Workspace_uploadBlueprint_Params) error { p.SetSize(10); return nil })
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Errorf("bob's upload while alice is at her limit: %v", err)
	}
	// Dropping an upload frees its slot.
	held.Release()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := begin(10); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("a dropped upload's slot was not freed: %v", err)
		}
	}
}

// An upload came from a token: an outside tester revoked it, and let
// another one expire, mid-upload, and both uploads went on to install into
// the account. Now every write and the finish check the token.
func TestAnUploadStopsWhenItsTokenIsRevoked(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	owner := h.login(t, h.token("alice"))
	token, info, err := newToken(ctx, owner, "thief's copy", 0)
	if err != nil {
		t.Fatal(err)
	}
	stolen := h.login(t, token)
	b := *blueprinttest.Bundle(t, blueprinttest.TestCounter)
	b.Name = "planted"
	bundle, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	f, release := stolen.UploadBlueprint(ctx, func(p schema.Workspace_uploadBlueprint_Params) error {
		p.SetSize(uint64(len(bundle)))
		return nil
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	up := res.Upload()
	write := func(chunk []byte) error {
		if err := up.Write(ctx, func(p schema.BlueprintUpload_write_Params) error { return p.SetChunk(chunk) }); err != nil {
			return err
		}
		return up.WaitStreaming()
	}
	if err := write(bundle[:server.MaxUploadChunk]); err != nil {
		t.Fatalf("a write before the revocation: %v", err)
	}
	if err := revokeToken(ctx, owner, info.id); err != nil {
		t.Fatal(err)
	}
	const want = "the token this capability was obtained with was revoked"
	if err := write(bundle[server.MaxUploadChunk : 2*server.MaxUploadChunk]); reason(err) != want {
		t.Errorf("a write after the revocation: %v, want %q", err, want)
	}
	ff, releaseFinish := up.Finish(ctx, nil)
	defer releaseFinish()
	if _, err := ff.Struct(); reason(err) != want {
		t.Errorf("finish after the revocation: %v, want %q", err, want)
	}
	for _, name := range blueprintNames(t, owner) {
		if name == b.Name {
			t.Fatalf("an upload whose token was revoked installed %q", name)
		}
	}
}

// installBlueprint, which takes the bundle in one message, used to skip the
// upload slots, so one user's installs could wait in the queue without
// bound (an outside tester queued 200). Now it holds a slot too.
func TestAnInstallInOneMessageHoldsAnUploadSlot(t *testing.T) {
	h := start(t, t.TempDir(), server.WithUploadLimits(1, 0))
	ctx := testCtx(t)
	ws := loginResolved(t, h, "alice")
	f, release := ws.UploadBlueprint(ctx, func(p schema.Workspace_uploadBlueprint_Params) error {
		p.SetSize(10)
		return nil
	})
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Fatal(err)
	}
	b := *blueprinttest.Bundle(t, blueprinttest.TestCounter)
	b.Name = "one-message"
	inst, releaseInstall := ws.InstallBlueprint(ctx, func(p schema.Workspace_installBlueprint_Params) error {
		bundle, err := p.NewBundle()
		if err != nil {
			return err
		}
		return b.Fill(bundle)
	})
	defer releaseInstall()
	if _, err := inst.Struct(); exc.TypeOf(err) != exc.Overloaded || !strings.Contains(err.Error(), "uploads or installs in progress, the limit is 1") {
		t.Fatalf("an install in one message while an upload is open under a limit of 1: %v, want overloaded naming the limit", err)
	}
}

// blueprintNames lists the names of the blueprints ws can use.
func blueprintNames(t *testing.T, ws schema.Workspace) []string {
	t.Helper()
	f, release := ws.Blueprints(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	list, err := res.Blueprints()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range list.Len() {
		name, err := list.At(i).Name()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// An installBlueprint with no bundle (a null pointer, as the stress test's
// random calls send) used to dereference a nil segment and kill the
// server. It is refused, and the server serves on.
func TestAnInstallWithNoBundleIsRefusedAndTheServerServesOn(t *testing.T) {
	h := start(t, t.TempDir())
	ws := loginResolved(t, h, "alice")
	f, release := ws.InstallBlueprint(testCtx(t), nil)
	defer release()
	if _, err := f.Struct(); err == nil || !strings.Contains(err.Error(), "installBlueprint needs a bundle") {
		t.Fatalf("an install with no bundle: %v, want a refusal naming the missing bundle", err)
	}
	if err := workspaceWorks(t, ws); err != nil {
		t.Fatalf("the server after an install with no bundle: %v", err)
	}
}

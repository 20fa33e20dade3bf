package server

// Design: Workspace.uploadBlueprint hands the client one BlueprintUpload
// capability per bundle. go-capnp's server.Server delivers its calls one at
// a time (stream writes included) and runs Shutdown once the last reference
// is gone, possibly while a call is still being answered, so mu guards the
// buffer. Every upload first reserves its announced size from the server's
// uploadBudget, per user and in total, so what uploads can make the server
// hold is bounded before a byte arrives, and the buffer grows only as bytes
// do.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

// Bounds on blueprint uploads.
const (
	// MaxUploadChunk bounds one BlueprintUpload.write.
	MaxUploadChunk = 64 << 10
	// DefaultUploadsPerUser is how many uploads one user may have open.
	DefaultUploadsPerUser = 2
	// DefaultUploadBytes bounds the bytes reserved by all open uploads.
	DefaultUploadBytes = 256 << 20
	// bundleOverhead is room for names, the version, framing and pointers
	// around the parts a bundle's limits count.
	bundleOverhead = 64 << 10
)

// maxBundleSize is the largest serialized bundle the blueprint limits allow.
func (s *Server) maxBundleSize() uint64 {
	return uint64(s.cfg.maxWasmSize+s.cfg.maxUISize+2*s.cfg.maxSchemaSize) + bundleOverhead
}

// uploadBudget bounds open uploads: how many each user has, and the bytes
// all of them announced. An install sent in one message holds a slot too,
// until it is done.
type uploadBudget struct {
	perUser  int
	maxBytes uint64

	mu       sync.Mutex
	open     map[string]int // user id -> open uploads
	reserved uint64
}

func newUploadBudget(perUser int, maxBytes uint64) *uploadBudget {
	return &uploadBudget{perUser: perUser, maxBytes: maxBytes, open: map[string]int{}}
}

// reserve takes one of user's upload slots and size bytes; release gives
// them back and may be called more than once.
func (b *uploadBudget) reserve(user string, size uint64) (release func(), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open[user] >= b.perUser {
		return nil, exc.New(exc.Overloaded, "", fmt.Sprintf("you have %d blueprint uploads or installs in progress, the limit is %d: finish or drop one first", b.open[user], b.perUser))
	}
	if b.reserved+size > b.maxBytes {
		return nil, exc.New(exc.Overloaded, "", "the server is receiving too many blueprint uploads; try again shortly")
	}
	b.open[user]++
	b.reserved += size
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.reserved -= size
			if b.open[user]--; b.open[user] == 0 {
				delete(b.open, user)
			}
		})
	}, nil
}

func (w *workspace) UploadBlueprint(ctx context.Context, call schema.Workspace_uploadBlueprint) error {
	size := call.Args().Size()
	if max := w.s.maxBundleSize(); size == 0 || size > max {
		return fmt.Errorf("a blueprint bundle of %d bytes: it must be 1 to %d bytes", size, max)
	}
	release, err := w.s.uploads.reserve(w.user.ID, size)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		release()
		return err
	}
	u := &blueprintUpload{w: w, size: size, release: release}
	// An upload acts for the token it came from: revoked or expired, it
	// neither takes more bytes nor installs.
	return res.SetUpload(schema.BlueprintUpload(capserver.New(w.cred.guard(schema.BlueprintUpload_Methods(nil, u)), u, u)))
}

// blueprintUpload is one bundle on its way in.
type blueprintUpload struct {
	w       *workspace
	size    uint64
	release func() // gives back the upload's reservation

	mu  sync.Mutex
	buf []byte
	err error // once set, every later call fails with it
}

var errUploadClosed = errors.New("this blueprint upload was already finished or abandoned")

func (u *blueprintUpload) Write(ctx context.Context, call schema.BlueprintUpload_write) error {
	chunk, err := call.Args().Chunk()
	if err != nil {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.err != nil:
		return u.err
	case len(chunk) > MaxUploadChunk:
		u.fail(fmt.Errorf("a chunk of %d bytes: the limit is %d", len(chunk), MaxUploadChunk))
	case uint64(len(u.buf)+len(chunk)) > u.size:
		u.fail(fmt.Errorf("%d bytes written past the announced size of %d", uint64(len(u.buf)+len(chunk))-u.size, u.size))
	default:
		u.buf = append(u.buf, chunk...)
	}
	return u.err
}

// fail ends the upload with err and frees what it held. The caller holds mu.
func (u *blueprintUpload) fail(err error) {
	u.err, u.buf = err, nil
	u.release()
}

func (u *blueprintUpload) Finish(ctx context.Context, call schema.BlueprintUpload_finish) error {
	u.mu.Lock()
	buf, err := u.buf, u.err
	switch {
	case err != nil:
	case uint64(len(buf)) != u.size:
		err = fmt.Errorf("%d of the announced %d bytes were written", len(buf), u.size)
	}
	u.buf, u.err = nil, errUploadClosed
	u.mu.Unlock()
	defer u.release()
	if err != nil {
		return err
	}
	msg, err := capnp.Unmarshal(buf)
	if err != nil {
		return fmt.Errorf("the uploaded bytes are not a Cap'n Proto message: %w", err)
	}
	in, err := schema.ReadRootBlueprint(msg)
	if err != nil {
		return fmt.Errorf("the uploaded message is not a Blueprint: %w", err)
	}
	call.Go() // compiling takes a while
	installed, err := u.w.installFrom(ctx, in)
	return answerInstall(call.AllocResults, installed, err)
}

// Shutdown abandons an upload nobody holds any more.
func (u *blueprintUpload) Shutdown() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err == nil {
		u.fail(errUploadClosed)
	}
}

// answerInstall answers installBlueprint or BlueprintUpload.finish with
// the blueprint installed, or fails with err.
func answerInstall[R interface {
	NewInfo() (schema.BlueprintInfo, error)
}](alloc func() (R, error), installed store.BlueprintRecord, err error) error {
	if err != nil {
		return err
	}
	res, err := alloc()
	if err != nil {
		return err
	}
	info, err := res.NewInfo()
	if err != nil {
		return err
	}
	return fillBlueprintInfo(info, installed)
}

// installFrom validates and installs a bundle for the workspace's user.
func (w *workspace) installFrom(ctx context.Context, in schema.Blueprint) (store.BlueprintRecord, error) {
	bp, err := w.s.bundleFromCapnp(in, w.user.ID)
	if err != nil {
		return bp, err
	}
	if err := w.s.checkBlueprintQuota(ctx, w.user.ID); err != nil {
		return bp, err
	}
	return w.s.install(ctx, bp, false)
}

package client

import (
	"context"
	"fmt"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/flowcontrol"

	"github.com/gadgetd/gadgetd/schema"
)

// uploadChunk is the size of one BlueprintUpload.write: the server's limit
// (server.MaxUploadChunk).
const uploadChunk = 64 << 10

// uploadWindow bounds the bytes of writes in flight, so an upload keeps the
// link busy without queueing the whole bundle in the server.
const uploadWindow = 1 << 20

// UploadBlueprint installs bundle, a Blueprint struct serialized as a Cap'n
// Proto message, in ws: it streams the bytes in chunks through
// Workspace.uploadBlueprint, so a bundle of any size the server allows
// travels as small messages. ws must come from a login that has succeeded:
// until then the server accepts only small messages from a connection.
func UploadBlueprint(ctx context.Context, ws schema.Workspace, bundle []byte) (schema.BlueprintInfo, capnp.ReleaseFunc, error) {
	f, release := ws.UploadBlueprint(ctx, func(p schema.Workspace_uploadBlueprint_Params) error {
		p.SetSize(uint64(len(bundle)))
		return nil
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return schema.BlueprintInfo{}, nil, err
	}
	up := res.Upload().AddRef()
	defer up.Release()
	capnp.Client(up).SetFlowLimiter(flowcontrol.NewFixedLimiter(uploadWindow))
	for off := 0; off < len(bundle); off += uploadChunk {
		chunk := bundle[off:min(off+uploadChunk, len(bundle))]
		if err := up.Write(ctx, func(p schema.BlueprintUpload_write_Params) error { return p.SetChunk(chunk) }); err != nil {
			return schema.BlueprintInfo{}, nil, fmt.Errorf("uploading the blueprint: %w", err)
		}
	}
	if err := up.WaitStreaming(); err != nil {
		return schema.BlueprintInfo{}, nil, fmt.Errorf("uploading the blueprint: %w", err)
	}
	ff, releaseFinish := up.Finish(ctx, nil)
	fin, err := ff.Struct()
	if err != nil {
		releaseFinish()
		return schema.BlueprintInfo{}, nil, err
	}
	info, err := fin.Info()
	if err != nil {
		releaseFinish()
		return schema.BlueprintInfo{}, nil, err
	}
	return info, releaseFinish, nil
}

package loadtest

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/schema"
)

// CreateCounters creates n gadgets of the counter example for the user
// of token, named prefix-0, prefix-1, ..., over one Cap'n Proto connection
// to addr, and returns their ids.
func CreateCounters(ctx context.Context, addr, token string, n int, prefix string) ([]string, error) {
	conn, err := client.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ws, release := conn.Login(ctx, token)
	defer release()
	ids := make([]string, 0, n)
	for i := range n {
		id, err := createCounter(ctx, ws, fmt.Sprintf("%s-%d", prefix, i))
		if err != nil {
			return nil, fmt.Errorf("creating counter %d of %d: %w", i+1, n, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func createCounter(ctx context.Context, ws schema.Workspace, name string) (string, error) {
	f, release := ws.Create(ctx, func(p schema.Workspace_create_Params) error {
		if err := p.SetBlueprint("counter"); err != nil {
			return err
		}
		return p.SetName(name)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return "", err
	}
	info, err := res.Info()
	if err != nil {
		return "", err
	}
	return info.Id()
}

// CountingListener is a counter listener that counts the changes it hears
// in heard and does nothing else with them.
func CountingListener(heard *atomic.Int64) counterpb.Listener {
	return counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, countChanges{heard}), nil, nil))
}

type countChanges struct{ heard *atomic.Int64 }

func (c countChanges) Changed(context.Context, counterpb.Listener_changed) error {
	c.heard.Add(1)
	return nil
}

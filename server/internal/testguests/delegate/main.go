// Command delegate is a test gadget that hands out its Storage and uses a
// Storage it is handed (a delegatepb.Delegate session): with two gadgets of
// it, a client can pass one gadget's delegated Storage to the other while
// the first is inside a call that will fail (server's
// TestADelegatedStorageUsedByAnotherGadgetIsNotPartOfTheRunningCall). Each
// session keeps its SessionContext, which present asks on behalf of every
// session (server's presence tests). Its save and mint try to keep, as a
// lasting credential, a capability a client hands it (server's
// TestAGuestCannotMintACredentialFromACapabilityItIsHanded).
package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/std/capnp/persistent"

	"github.com/gadgetd/gadgetd/guest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server/internal/testguests/delegate/delegatepb"
)

func init() { guest.Serve(app{}) }

func main() {}

type app struct{}

// open is the sessions open on this instance.
var open []*session

func (app) Open(ctx context.Context, call schema.Guest_open) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	s := &session{context: call.Args().Context().AddRef()}
	open = append(open, s)
	return res.SetSession(capnp.Client(delegatepb.Delegate_ServerToClient(s)))
}

type session struct{ context schema.SessionContext }

// Shutdown runs when the host drops the session.
func (s *session) Shutdown() {
	open = slices.DeleteFunc(open, func(o *session) bool { return o == s })
	s.context.Release()
}

func (*session) Present(ctx context.Context, call delegatepb.Delegate_present) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	answers, err := res.NewAnswers(int32(len(open)))
	if err != nil {
		return err
	}
	for i, o := range open {
		if err := answers.Set(i, presentSays(ctx, o.context)); err != nil {
			return err
		}
	}
	return nil
}

// presentSays is what sc.present answers, as Delegate.present says it.
func presentSays(ctx context.Context, sc schema.SessionContext) string {
	res, release, err := sc.PresentSync(ctx, nil)
	if capnp.IsDisconnected(err) {
		return "disconnected"
	}
	if err != nil {
		return "error: " + err.Error()
	}
	defer release()
	list, err := res.Present()
	if err != nil {
		return "error: " + err.Error()
	}
	var people []string
	for i := range list.Len() {
		name, _ := list.At(i).UserName()
		people = append(people, name+":"+list.At(i).Role().String())
	}
	return strings.Join(people, ",")
}

func (*session) Storage(ctx context.Context, call delegatepb.Delegate_storage) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	// guest.Storage's capability is borrowed: the results take a reference
	// of their own.
	return res.SetStorage(capnp.Client(guest.Storage(ctx)).AddRef())
}

func (*session) WriteThenFail(ctx context.Context, call delegatepb.Delegate_writeThenFail) error {
	args := call.Args()
	key, _ := args.Key()
	value, _ := args.Value()
	until, _ := args.Until()
	if err := put(ctx, guest.Storage(ctx), key, value); err != nil {
		return err
	}
	log(ctx, "written")
	for deadline := time.Now().Add(time.Duration(args.Ms()) * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		_, found, err := get(ctx, guest.Storage(ctx), until)
		if err != nil {
			return err
		}
		if found {
			return errors.New("writeThenFail fails on purpose: its write must be discarded")
		}
	}
	return fmt.Errorf("writeThenFail gave up: %q did not appear within %d ms", until, args.Ms())
}

func (*session) Use(ctx context.Context, call delegatepb.Delegate_use) error {
	args := call.Args()
	st := schema.Storage(args.Storage())
	key, _ := args.Get()
	putKey, _ := args.PutKey()
	putValue, _ := args.PutValue()
	value, found, err := get(ctx, st, key)
	if err != nil {
		return err
	}
	if err := put(ctx, st, putKey, putValue); err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetFound(found)
	return res.SetValue(value)
}

func (*session) Save(ctx context.Context, call delegatepb.Delegate_save) error {
	f, release := persistent.Persistent(call.Args().Cap()).Save(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	ref, err := res.SturdyRef()
	if err != nil {
		return err
	}
	out, err := call.AllocResults()
	if err != nil {
		return err
	}
	return out.SetToken(ref.Text())
}

func (*session) Mint(ctx context.Context, call delegatepb.Delegate_mint) error {
	how, err := call.Args().How()
	if err != nil {
		return err
	}
	g := schema.Gadget(call.Args().Gadget())
	var credential string
	switch how {
	case "frameTicket":
		res, release, err := g.FrameTicketSync(ctx, nil)
		if err != nil {
			return err
		}
		defer release()
		credential, err = res.Ticket()
		if err != nil {
			return err
		}
	case "createLink":
		res, release, err := g.CreateLinkSync(ctx, func(p schema.Gadget_createLink_Params) error { return p.SetLabel("minted") })
		if err != nil {
			return err
		}
		defer release()
		credential, err = res.Secret()
		if err != nil {
			return err
		}
	case "share":
		_, release, err := g.ShareSync(ctx, func(p schema.Gadget_share_Params) error { return p.SetUser("carol") })
		if err != nil {
			return err
		}
		release()
		credential = "shared"
	default:
		return fmt.Errorf("mint: unknown how %q", how)
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetCredential(credential)
}

func get(ctx context.Context, st schema.Storage, key string) ([]byte, bool, error) {
	res, release, err := st.GetSync(ctx, func(p schema.Storage_get_Params) error { return p.SetKey(key) })
	if err != nil {
		return nil, false, err
	}
	defer release()
	v, err := res.Value()
	return append([]byte(nil), v...), res.Found(), err
}

func put(ctx context.Context, st schema.Storage, key string, value []byte) error {
	_, release, err := st.PutSync(ctx, func(p schema.Storage_put_Params) error {
		if err := p.SetKey(key); err != nil {
			return err
		}
		return p.SetValue(value)
	})
	if err != nil {
		return err
	}
	release()
	return nil
}

func log(ctx context.Context, text string) {
	_, release, err := guest.Host().LogSync(ctx, func(p schema.Host_log_Params) error { return p.SetText(text) })
	if err == nil {
		release()
	}
}

package ledger

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

// The kill -9 test: a child process (this test binary, running
// TestKill9Child) queues and approves actions and applies them with real
// HTTP calls to a loopback server the parent runs. The server holds the
// killAt-th call open and the parent SIGKILLs the child meanwhile, so that
// the child dies with that action Applying. The parent then reopens the
// file and runs an Applier of its own.

const (
	childEnv = "GADGETD_LEDGER_KILL9_CHILD" // "db path|server URL|actions"
	actionsN = 20
	killAt   = 6
)

// service is the outside service: it records each action id it receives
// and can tell whether it received one.
type service struct {
	mu       sync.Mutex
	received []string
	// holdAt: the call number to hold open until its client dies, recording
	// it first (the call took effect) or not (it never arrived).
	holdAt     int
	recordHeld bool
	held       chan struct{} // closed when the held call arrived
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	switch r.URL.Path {
	case "/apply":
		s.mu.Lock()
		n := len(s.received) + 1
		hold := n == s.holdAt
		if hold {
			s.holdAt = 0
		}
		if !hold || s.recordHeld {
			s.received = append(s.received, id)
		}
		s.mu.Unlock()
		if hold {
			close(s.held)
			<-r.Context().Done() // the child is killed meanwhile
			return
		}
		fmt.Fprintf(w, "applied %s", id)
	case "/has":
		s.mu.Lock()
		has := slices.Contains(s.received, id)
		s.mu.Unlock()
		fmt.Fprint(w, has)
	default:
		http.NotFound(w, r)
	}
}

func (s *service) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.received)
}

var loopback = &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 30 * time.Second}

// applyOverHTTP makes an action's real call to the service at base.
func applyOverHTTP(base string) ApplyFunc {
	return func(ctx context.Context, a gatekeepers.Action) (gatekeepers.Outcome, error) {
		req, err := http.NewRequestWithContext(ctx, "POST", base+"/apply?id="+url.QueryEscape(a.ID), nil)
		if err != nil {
			return gatekeepers.Outcome{}, err
		}
		resp, err := loopback.Do(req)
		if err != nil {
			return gatekeepers.Outcome{}, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			return gatekeepers.Outcome{}, fmt.Errorf("status %d %s: %v", resp.StatusCode, body, err)
		}
		return gatekeepers.Outcome{Describe: string(body)}, nil
	}
}

// askOverHTTP asks the service whether it received an action.
func askOverHTTP(base string) ReconcileFunc {
	return func(ctx context.Context, a gatekeepers.Action) (bool, gatekeepers.Outcome, bool, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", base+"/has?id="+url.QueryEscape(a.ID), nil)
		if err != nil {
			return false, gatekeepers.Outcome{}, false, err
		}
		resp, err := loopback.Do(req)
		if err != nil {
			return false, gatekeepers.Outcome{}, false, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		applied := string(body) == "true"
		return applied, gatekeepers.Outcome{Describe: "found applied after a restart"}, true, nil
	}
}

// TestKill9Child is the child process of TestExactlyOnceInOrderAcrossKill9;
// it does nothing when run on its own.
func TestKill9Child(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("the child process of TestExactlyOnceInOrderAcrossKill9")
	}
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[2])
	db := openDB(t, parts[0])
	l, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	bind(t, l, "g1", "alice", "web")
	var ids []string
	for range n {
		ids = append(ids, queue(t, l, "g1", "web").ID)
	}
	decide(t, l, "alice", true, ids...)
	ap := NewApplier(l, applyOverHTTP(parts[1]), nil)
	if err := ap.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {} // until killed
}

func TestExactlyOnceInOrderAcrossKill9(t *testing.T) {
	for _, tc := range []struct {
		name       string
		recordHeld bool // the held call took effect
		canTell    bool // the parent's reconcile asks the service
	}{
		{"reconciled, the call took effect", true, true},
		{"reconciled, the call never arrived", false, true},
		{"cannot tell: in doubt, for a human", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &service{holdAt: killAt, recordHeld: tc.recordHeld, held: make(chan struct{})}
			srv := httptest.NewServer(svc)
			defer srv.Close()
			path := filepath.Join(t.TempDir(), "gadgetd.db")

			var childOut bytes.Buffer
			cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Child$", "-test.v")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d", childEnv, path, srv.URL, actionsN))
			cmd.Stdout, cmd.Stderr = &childOut, &childOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-svc.held:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the child never made call %d; its output:\n%s", killAt, childOut.String())
			}
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			cmd.Wait()

			db := openDB(t, path)
			t.Cleanup(func() { db.Close() }) // after the Applier's Close
			l, err := Open(db)
			if err != nil {
				t.Fatal(err)
			}
			all, err := l.Actions(ctx, "alice", Filter{})
			if err != nil || len(all) != actionsN {
				t.Fatalf("reopened: %d actions, %v", len(all), err)
			}
			var ids []string
			for _, a := range all {
				ids = append(ids, a.ID)
			}
			interrupted, err := l.Interrupted(ctx)
			if err != nil || len(interrupted) != 1 || interrupted[0].ID != ids[killAt-1] {
				t.Fatalf("interrupted = %+v, %v; want action %d", interrupted, err, killAt)
			}

			reconcile := askOverHTTP(srv.URL)
			if !tc.canTell {
				reconcile = cannotTell
			}
			ap := startApplier(t, l, applyOverHTTP(srv.URL), reconcile)
			if !tc.canTell {
				ap.waitIdle()
				held, _ := l.Action(ctx, "alice", ids[killAt-1])
				if held.State != gatekeepers.InDoubt {
					t.Fatalf("the interrupted action is %s, want in doubt", stateName(held.State))
				}
				if got := svc.got(); !slices.Equal(got, ids[:killAt]) {
					t.Fatalf("received %d calls while in doubt, want the %d before the kill", len(got), killAt)
				}
				decide(t, l, "alice", false, held.ID) // a human drops it
			}
			eventually(t, "every action finished", func() bool {
				open, err := l.Actions(ctx, "alice", Filter{States: []gatekeepers.ActionState{
					gatekeepers.Pending, gatekeepers.Approved, gatekeepers.Applying, gatekeepers.InDoubt}})
				return err == nil && len(open) == 0
			})
			if got := svc.got(); !slices.Equal(got, ids) {
				t.Fatalf("the service received\n%v\nwant every action once, in order:\n%v", got, ids)
			}
		})
	}
}

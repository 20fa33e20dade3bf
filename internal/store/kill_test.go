package store_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/store"
)

// The kill -9 test: a child process (this test binary, running
// TestKill9CommitChild) runs concurrent committers, each on its own gadget,
// and prints a line for each commit once Commit has answered it. The parent
// SIGKILLs the child while they run, reopens the file, and looks for every
// write the child was told had committed.
//
// What it can catch: a commit answered before the transaction holding its
// writes has committed (say, answered when it joins a group). What no kill
// can catch is a missing fsync: the kernel keeps what the process wrote
// after the process dies; only losing power would show it.

const (
	commitChildEnv = "GADGETD_STORE_KILL9_CHILD" // the db path
	killCommitters = 32
	killAfterAcks  = 2000 // acknowledged commits before the kill
)

// TestKill9CommitChild is the child process of
// TestAcknowledgedCommitsSurviveKill9; it does nothing when run on its own.
func TestKill9CommitChild(t *testing.T) {
	path := os.Getenv(commitChildEnv)
	if path == "" {
		t.Skip("the child process of TestAcknowledgedCommitsSurviveKill9")
	}
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var out sync.Mutex
	for g := range killCommitters {
		go func() {
			for i := 0; ; i++ {
				key, value := fmt.Sprintf("k%07d", i), fmt.Sprintf("g%d-%d", g, i)
				if err := s.Commit(context.Background(), fmt.Sprint("g", g), put(key, value), 1<<30); err != nil {
					fmt.Fprintf(os.Stderr, "commit g%d %s: %v\n", g, key, err)
					return
				}
				out.Lock()
				fmt.Fprintf(os.Stdout, "ack g%d %s %s\n", g, key, value) // unbuffered: one write
				out.Unlock()
			}
		}()
	}
	select {} // until killed
}

func TestAcknowledgedCommitsSurviveKill9(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gadgetd.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9CommitChild$")
	cmd.Env = append(os.Environ(), commitChildEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killTimer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() }) // a stuck child
	defer killTimer.Stop()

	type ack struct{ gadget, key, value string }
	var acks []ack
	lines := bufio.NewScanner(stdout)
	for lines.Scan() { // a line cut off by the kill fails to parse and counts for nothing
		var a ack
		if n, _ := fmt.Sscanf(lines.Text(), "ack %s %s %s", &a.gadget, &a.key, &a.value); n != 3 {
			continue
		}
		acks = append(acks, a)
		if len(acks) == killAfterAcks {
			if err := cmd.Process.Kill(); err != nil { // SIGKILL, while the committers run
				t.Fatal(err)
			}
		}
	}
	cmd.Wait()
	if len(acks) < killAfterAcks {
		t.Fatalf("the child acknowledged %d commits before it ended, want %d; its stderr:\n%s", len(acks), killAfterAcks, stderr.String())
	}

	s := openStore(t, path)
	for _, a := range acks {
		wantValue(t, s, a.gadget, a.key, a.value)
	}
	if t.Failed() {
		t.Fatalf("of %d acknowledged commits, some were lost", len(acks))
	}
	t.Logf("all %d acknowledged commits are in the file", len(acks))
}

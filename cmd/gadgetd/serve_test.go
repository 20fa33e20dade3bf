package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAFailedStartLeavesNoDataDirectory starts the real binary in ways that
// fail before it serves: some are found before the data directory is
// touched (a bad config, bad TLS files, a port in use), others only after
// the server has made it (a limit the sandbox refuses, --dev without its
// examples). None may leave a data directory behind, nor the parents it
// would have made; a data directory that already existed is kept.
func TestAFailedStartLeavesNoDataDirectory(t *testing.T) {
	bin := buildBinary(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		name   string
		config string
		args   []string
		want   string
	}{
		{"port in use", "", []string{"--capnp", taken.Addr().String()}, "capnp listener"},
		{"http port in use", "", []string{"--http", taken.Addr().String()}, "http listener"},
		{"missing TLS files", "", []string{"--tls-cert", missing, "--tls-key", missing}, "loading the TLS certificate"},
		{"unknown config key", "[users]\nmax_gadget = 1\n", nil, "unknown key users.max_gadget"},
		{"budget below one gadget's memory", "[gadgets]\nmemory_budget = \"1MiB\"\n", nil, "budget"},
		{"empty http address", "", []string{"--http", ""}, "--http (listen.http): empty address"},
		{"empty capnp address", "", []string{"--capnp", ""}, "--capnp (listen.capnp): empty address"},
		{"--dev without examples", "", []string{"--dev", "--examples", filepath.Join(t.TempDir(), "none")}, "reading examples"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "new")
			data := filepath.Join(parent, "data")
			args := []string{"serve", "--data", data, "--capnp", "127.0.0.1:0", "--http", "127.0.0.1:0"}
			if tc.config != "" {
				args = append(args, "--config", writeConfig(t, tc.config))
			}
			out, err := exec.Command(bin, append(args, tc.args...)...).CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), tc.want) {
				t.Fatalf("serve: %v, want exit 1 and %q in:\n%s", err, tc.want, out)
			}
			if _, err := os.Stat(parent); !os.IsNotExist(err) {
				entries, _ := filepath.Glob(filepath.Join(data, "*"))
				t.Fatalf("the failed start left %s behind (%v): %v", parent, err, entries)
			}
		})
	}

	t.Run("an existing data directory is kept", func(t *testing.T) {
		data := t.TempDir()
		keep := filepath.Join(data, "keep")
		if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "serve", "--data", data, "--capnp", "127.0.0.1:0", "--http", "127.0.0.1:0",
			"--dev", "--examples", filepath.Join(t.TempDir(), "none")).CombinedOutput()
		if err == nil {
			t.Fatalf("serve --dev without examples started:\n%s", out)
		}
		if _, err := os.Stat(keep); err != nil {
			t.Fatalf("the failed start removed what was in an existing data directory: %v", err)
		}
	})
}

func TestFirstMissingDirIsTheOutermostOneToMake(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct{ path, want string }{
		{root, ""},
		{filepath.Join(root, "a"), filepath.Join(root, "a")},
		{filepath.Join(root, "a", "b", "c"), filepath.Join(root, "a")},
		{filepath.Join(root, "a", "..", "d") + "/", filepath.Join(root, "d")},
	} {
		if got := firstMissingDir(tc.path); got != tc.want {
			t.Errorf("firstMissingDir(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

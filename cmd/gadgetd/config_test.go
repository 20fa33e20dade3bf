package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/server"
)

const exampleConfig = "../../docs/gadgetd.example.toml"

// eachKey calls fn with the dotted key of every leaf field of the struct v
// and whether v holds its zero value there.
func eachKey(v reflect.Value, prefix string, fn func(key string, zero bool)) {
	for i := 0; i < v.NumField(); i++ {
		key := prefix + v.Type().Field(i).Tag.Get("toml")
		if f := v.Field(i); f.Kind() == reflect.Struct {
			eachKey(f, key+".", fn)
		} else {
			fn(key, f.IsZero())
		}
	}
}

// TestExampleConfigSetsEveryKeyToItsDefault keeps docs/gadgetd.example.toml
// true: it sets every key that has a fixed default to that default, and
// shows the others (TLS, and what depends on other keys) commented out.
func TestExampleConfigSetsEveryKeyToItsDefault(t *testing.T) {
	got, err := loadConfig(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	want := defaultServeConfig()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the example's values are not the defaults:\n got  %+v\n want %+v", got, want)
	}
	var c serveConfig
	md, err := toml.DecodeFile(exampleConfig, &c)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(exampleConfig)
	eachKey(reflect.ValueOf(want), "", func(key string, noDefault bool) {
		path := strings.Split(key, ".")
		switch {
		case !noDefault && !md.IsDefined(path...):
			t.Errorf("the example does not set %s", key)
		case key == "services":
			// A table of tables: shown as one commented-out service.
			if !strings.Contains(string(raw), "\n# [services.") {
				t.Errorf("the example does not show a service commented out")
			}
		case noDefault && !strings.Contains(string(raw), "\n# "+path[len(path)-1]+" = "):
			t.Errorf("the example does not show %s commented out", key)
		}
	})
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gadgetd.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"[users]\nmax_gadget = 5\n", "unknown key users.max_gadget"},
		{"dta = \"x\"\n[gadgets]\nmemroy = \"1MiB\"\n", "unknown key dta, gadgets.memroy"},
		{"[connections]\nmax = 0\n", `"connections.max"`},
		{"[users]\nmax_gadgets = -1\n", `"users.max_gadgets"`},
		{"[gadgets]\nmemory = \"64XB\"\n", `"gadgets.memory"`},
		{"[gadgets]\nmemory = \"2TiB\"\n", `"gadgets.memory"`},
		{"[gadgets]\ncall_timeout = 10\n", `"gadgets.call_timeout"`},
		{"[installs]\ntimeout = \"-1s\"\n", `"installs.timeout"`},
		{"data = 5\n", "data"},
		{"[listen\n", "line 2"},
		{"[gadgets]\nidle_release = \"1ns\"\n", "gadgets.idle_release: want at least 1s"},
		{"[gadgets]\npool = -1\n", `"gadgets.pool"`},
		{"[gadgets]\npool = 65\n", `"gadgets.pool"`},
		{"[websocket]\nallowed_origins = [\"gadgets.example.com\"]\n", `"websocket.allowed_origins"`},
	} {
		_, err := loadConfig(writeConfig(t, tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %q: error %v, want one containing %s", tc.file, err, tc.want)
		}
	}
	if _, err := loadConfig(filepath.Join(t.TempDir(), "missing.toml")); err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Errorf("a missing config file: %v", err)
	}
}

func TestConfigSizesAndDurationsReadAsWritten(t *testing.T) {
	c, err := loadConfig(writeConfig(t, `
[storage]
max_key_size = 100
max_value_size = "3KiB"
[gadgets]
memory = "5MiB"
memory_budget = "1GiB"
call_timeout = "1m30s"
pool = 0
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Storage.MaxKeySize != 100 || c.Storage.MaxValueSize != 3<<10 || c.Gadgets.Memory != 5<<20 ||
		c.Gadgets.MemoryBudget != 1<<30 || c.Gadgets.CallTimeout != duration(90e9) || c.Gadgets.Pool != 0 {
		t.Fatalf("read %+v %+v", c.Storage, c.Gadgets)
	}
	if c.Users.MaxGadgets != defaultServeConfig().Users.MaxGadgets {
		t.Fatalf("a key left out did not keep its default: %d", c.Users.MaxGadgets)
	}
}

// TestConfigFileLimitsTheRunningServerAndFlagsOverrideIt starts a real
// server from a config file whose gadget quota is 1: the second gadget is
// refused. The file's data directory and capnp address are overridden by
// flags: the file's capnp address is taken, so the server could not start
// if the flag did not win, and the file's data directory stays unmade.
func TestConfigFileLimitsTheRunningServerAndFlagsOverrideIt(t *testing.T) {
	bin := buildBinary(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	fileData := filepath.Join(t.TempDir(), "from-file")
	config := writeConfig(t, `data = "`+fileData+`"
[listen]
capnp = "`+taken.Addr().String()+`"
[users]
max_gadgets = 1
`)
	data := t.TempDir()
	out, err := exec.Command(bin, "user", "add", "alice", "--data", data).Output()
	if err != nil {
		t.Fatalf("user add: %v", err)
	}
	token := strings.TrimSpace(string(out))
	addr, _, _, _ := startServe(t, bin, "--config", config, "--data", data)

	if out, err := gadgetd(t, bin, addr, token, "blueprint", "install", blueprinttest.Example(t, "counter")); err != nil {
		t.Fatalf("blueprint install: %v %s", err, out)
	}
	if out, err := gadgetd(t, bin, addr, token, "new", "counter"); err != nil {
		t.Fatalf("the first gadget: %v %s", err, out)
	}
	out2, err := gadgetd(t, bin, addr, token, "new", "counter")
	if err == nil || !strings.Contains(out2, "the limit is 1") {
		t.Fatalf("the second gadget under users.max_gadgets = 1: %v %q", err, out2)
	}
	if _, err := os.Stat(filepath.Join(data, "gadgetd.db")); err != nil {
		t.Fatalf("--data did not override the file's data: %v", err)
	}
	if _, err := os.Stat(fileData); !os.IsNotExist(err) {
		t.Fatalf("the file's data directory was made although --data overrode it: %v", err)
	}
}

// TestTheConnectionLimitFitsTheOpenFileLimit: the default connections.max
// is lowered, with a notice, to what the process's open-file limit holds
// next to the server's other files; a configured value that does not fit
// is refused with an error that says what to do; an unknown limit (0) is
// not checked.
func TestTheConnectionLimitFitsTheOpenFileLimit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		max       count
		limit     uint64
		want      count
		wantErr   string
		wantNotes string
	}{
		{"default, room", server.DefaultMaxConnections, 1 << 20, server.DefaultMaxConnections, "", ""},
		{"default, unknown limit", server.DefaultMaxConnections, 0, server.DefaultMaxConnections, "", ""},
		{"default, lowered", server.DefaultMaxConnections, 2000, 2000 - fdReserve, "", "lowered from its default"},
		{"default, no room at all", server.DefaultMaxConnections, fdReserve + 10, 0, "ulimit -n", ""},
		{"configured, room", 100, 2000, 100, "", ""},
		{"configured, no room", 5000, 2000, 0, "connections.max 5000 needs about", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultServeConfig()
			cfg.Connections.Max = tc.max
			var notes strings.Builder
			err := fitConnections(&cfg, tc.limit, &notes)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Connections.Max != tc.want || !strings.Contains(notes.String(), tc.wantNotes) || (tc.wantNotes == "") != (notes.Len() == 0) {
				t.Fatalf("connections.max = %d with notice %q, want %d and a notice containing %q", cfg.Connections.Max, notes.String(), tc.want, tc.wantNotes)
			}
		})
	}
}

package browsertest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ChromiumPath is Debian's chromium, the only browser the tests run.
const ChromiumPath = "/usr/bin/chromium"

// flags are the command-line flags of every test browser besides headless
// mode and the profile directory: no OS sandbox (the tests run as root in
// CI), no GPU, no QUIC, and nothing that calls out on its own (updates,
// sync, component downloads), so that a loopback listener in a test hears
// only what the page under test sends.
var flags = []chromedp.ExecAllocatorOption{
	chromedp.ExecPath(ChromiumPath),
	chromedp.Headless,
	chromedp.NoSandbox,
	chromedp.DisableGPU,
	chromedp.NoFirstRun,
	chromedp.NoDefaultBrowserCheck,
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.Flag("disable-default-apps", true),
	chromedp.Flag("disable-extensions", true),
	chromedp.Flag("disable-dev-shm-usage", true),
	chromedp.Flag("disable-breakpad", true),
	chromedp.Flag("metrics-recording-only", true),
	chromedp.Flag("safebrowsing-disable-auto-update", true),
	chromedp.Flag("password-store", "basic"),
	// A popup needs no click: the tests show a sandbox stopping
	// window.open, not the popup blocker.
	chromedp.Flag("disable-popup-blocking", true),
	chromedp.WindowSize(1280, 900),
}

// TestTimeout bounds one test's browser: it ends the browser, and with it
// every action still waiting, well before the package's go test -timeout.
const TestTimeout = 5 * time.Minute

// RequireChromium skips t when Chromium is not installed, or fails it in CI
// (CI=true), where the browser tests must run.
func RequireChromium(t testing.TB) {
	t.Helper()
	requireBrowser(t, ChromiumPath, "chromium")
}

// NoPreloading is the profile preference docs/SECURITY.md asks of every
// Chromium that opens the shell: Settings, Performance, "Preload pages"
// off (the NetworkPredictionOptions policy set to 2). With preloading on,
// Chromium connects to the target of a frame's <link rel=preconnect> and
// of a navigation its policy refuses, though CSP forbids both.
const NoPreloading = `{"net": {"network_prediction_options": 2}}`

// NewTab starts a headless Chromium with a fresh profile directory for t and
// returns the context of its first tab, for chromedp.Run and chromedp.Do.
// The profile has preloading off (NoPreloading). The browser is stopped,
// and its profile removed, when t ends, or after TestTimeout.
func NewTab(t testing.TB) context.Context {
	t.Helper()
	return NewTabWithPreferences(t, NoPreloading)
}

// NewTabWithPreferences is NewTab with the profile's preferences (the JSON
// of its Default/Preferences file) given; "" leaves Chromium's defaults.
func NewTabWithPreferences(t testing.TB, preferences string) context.Context {
	t.Helper()
	RequireChromium(t)
	profile := t.TempDir()
	if preferences != "" {
		if err := os.Mkdir(filepath.Join(profile, "Default"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(profile, "Default", "Preferences"), []byte(preferences), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancelTimeout := context.WithTimeout(context.Background(), TestTimeout)
	opts := append(flags[:len(flags):len(flags)], chromedp.UserDataDir(profile))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	// Cleanups run last-in first-out: the tab, then the browser process
	// (waited for, so that t.TempDir can remove the profile), then the timer.
	t.Cleanup(cancelTimeout)
	t.Cleanup(cancelAlloc)
	t.Cleanup(cancelTab)
	// Start the browser now, so that a failure to start is reported here.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("browsertest: starting %s: %v", ChromiumPath, err)
	}
	// The page's console and uncaught exceptions go to the test's log, so
	// that a failure shows what the page said.
	if err := chromedp.Listen(tab, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var args []string
			for _, a := range ev.Args {
				if a.Value != nil {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			t.Logf("browser console.%s: %s", ev.Type, strings.Join(args, " "))
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			if d.Exception != nil {
				t.Logf("browser exception: %s", d.Exception.Description)
			} else {
				t.Logf("browser exception: %s", d.Text)
			}
		}
	}); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	return tab
}

// requireBrowser skips t when the browser at path is missing, or fails it
// in CI (CI=true); pkg is the Debian package that installs it.
func requireBrowser(t testing.TB, path, pkg string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("browsertest: %v", err)
	}
	msg := path + " is missing: run scripts/deps.sh as root (or apt-get install " + pkg + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal("browsertest: " + msg + "; CI must run the browser tests")
	}
	t.Skip("browsertest: " + msg)
}

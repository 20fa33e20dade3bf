package browsertest

// Firefox: Debian's firefox-esr, headless, driven over WebDriver BiDi
// (bidi.go) on a loopback port it picks itself, with a fresh profile whose
// preferences keep it off the network.
//
// Goroutines: NewFirefoxTab starts the browser process and one goroutine
// that reads its stderr until it ends (to learn the BiDi address, then to
// drain it); the BiDi connection has its own reader. A FirefoxTab's methods
// are called from the test's goroutine. The test's cleanup asks the browser
// to close, closes the BiDi connection, ends the browser's whole process
// group and waits for both goroutines, before the profile is removed.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// FirefoxPath is Debian's firefox-esr, the only Firefox the tests run.
const FirefoxPath = "/usr/bin/firefox-esr"

// firefoxPrefs keep a test Firefox off the network, so that it neither
// stalls nor fills the log on a machine with none, and so that a loopback
// listener in a test hears only what the page under test sends: no
// updates, telemetry, captive-portal or connectivity checks, safe
// browsing, Normandy, remote settings, add-on or search updates,
// speculative connections, or DNS over HTTPS. It allows popups, as the
// Chromium tests do: they show a sandbox stopping window.open, not the
// blocker. And it lets WebRTC use loopback addresses, off by default, so
// that a probe's STUN packet can reach a loopback witness at all (the
// control run shows that it does, where nothing removed WebRTC). And it
// sends a link's pings, off by default (browser.send_pings), so that the
// ping probe's control reaches the witness and its protected run proves
// the policy refuses the ping, for a user who turned them on.
const firefoxPrefs = `
user_pref("app.update.disabledForTesting", true);
user_pref("app.update.auto", false);
user_pref("app.normandy.enabled", false);
user_pref("app.normandy.api_url", "");
user_pref("app.shield.optoutstudies.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("toolkit.telemetry.unified", false);
user_pref("toolkit.telemetry.server", "");
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("browser.safebrowsing.malware.enabled", false);
user_pref("browser.safebrowsing.phishing.enabled", false);
user_pref("browser.safebrowsing.downloads.enabled", false);
user_pref("browser.safebrowsing.blockedURIs.enabled", false);
user_pref("browser.safebrowsing.provider.mozilla.updateURL", "");
user_pref("services.settings.server", "data:,#remote-settings-off");
user_pref("extensions.update.enabled", false);
user_pref("extensions.blocklist.enabled", false);
user_pref("extensions.getAddons.cache.enabled", false);
user_pref("browser.search.update", false);
user_pref("browser.region.update.enabled", false);
user_pref("browser.region.network.url", "");
user_pref("geo.provider.network.url", "");
user_pref("media.gmp-manager.url", "");
user_pref("network.trr.mode", 5);
user_pref("network.http.speculative-parallel-limit", 0);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.page", 0);
user_pref("browser.startup.homepage", "about:blank");
user_pref("browser.newtabpage.enabled", false);
user_pref("browser.aboutwelcome.enabled", false);
user_pref("dom.disable_open_during_load", false);
user_pref("media.peerconnection.ice.loopback", true);
user_pref("browser.send_pings", true);
`

// RequireFirefox skips t when firefox-esr is not installed, or fails it in
// CI (CI=true), where the browser tests must run.
func RequireFirefox(t testing.TB) {
	t.Helper()
	requireBrowser(t, FirefoxPath, "firefox-esr")
}

// A FirefoxTab is a tab of a headless Firefox a test started, or a frame
// in one.
type FirefoxTab struct {
	t               testing.TB
	ctx             context.Context // ends after TestTimeout
	bidi            *bidiConn
	browsingContext string // the tab's id, or the frame's
	top             string // the tab's id (for a frame, that of its tab)
}

// bidiAddress is how Firefox says where it listens, on stderr.
var bidiAddress = regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`)

// NewFirefoxTab starts a headless Firefox with a fresh profile for t and
// returns its tab. The page's console and errors go to t's log. The
// browser is ended, and its profile removed, when t ends, or after
// TestTimeout.
func NewFirefoxTab(t testing.TB) *FirefoxTab {
	t.Helper()
	RequireFirefox(t)
	profile := t.TempDir()
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(firefoxPrefs), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), TestTimeout)
	t.Cleanup(cancel)

	cmd := exec.Command(FirefoxPath, "--headless", "--no-remote", "--remote-debugging-port=0", "--profile", profile, "about:blank")
	// Its own process group, so that ending it ends its content processes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), "HOME="+profile, "MOZ_CRASHREPORTER_DISABLE=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("browsertest: starting %s: %v", FirefoxPath, err)
	}
	addr := make(chan string, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := bidiAddress.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	stop := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-drained // before Wait, which closes the pipe
		cmd.Wait()
	}

	// The browser, before it has a tab of its own: OpenTab opens the first.
	browser := &FirefoxTab{t: t, ctx: ctx}
	var url string
	select {
	case url = <-addr:
	case <-drained:
		stop()
		t.Fatalf("browsertest: %s ended without saying where it listens for WebDriver BiDi", FirefoxPath)
	case <-time.After(time.Minute):
		stop()
		t.Fatalf("browsertest: %s did not say where it listens for WebDriver BiDi within a minute", FirefoxPath)
	}
	browser.bidi, err = dialBiDi(ctx, url+"/session", browser.logEvent)
	if err != nil {
		stop()
		t.Fatalf("browsertest: connecting to Firefox's WebDriver BiDi at %s: %v", url, err)
	}
	// Cleanups run last-in first-out: the browser is asked to close, then
	// the connection closed and the process group ended.
	t.Cleanup(stop)
	t.Cleanup(browser.bidi.close)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		browser.bidi.call(ctx, "browser.close", struct{}{}, nil)
	})

	if err := browser.bidi.call(ctx, "session.new", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	if err := browser.bidi.call(ctx, "session.subscribe", map[string]any{"events": []string{"log.entryAdded"}}, nil); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	tab, err := browser.openTab()
	if err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	return tab
}

// OpenTab opens another tab in tab's browser, as a user would.
func (tab *FirefoxTab) OpenTab() (browserTab, error) { return tab.openTab() }

func (tab *FirefoxTab) openTab() (*FirefoxTab, error) {
	var created struct{ Context string }
	if err := tab.bidi.call(tab.ctx, "browsingContext.create", map[string]any{"type": "tab"}, &created); err != nil {
		return nil, err
	}
	return &FirefoxTab{t: tab.t, ctx: tab.ctx, bidi: tab.bidi, browsingContext: created.Context, top: created.Context}, nil
}

// GadgetFrame: a frame is a browsing context of its own, a child of the
// tab's, whatever its origin.
func (tab *FirefoxTab) GadgetFrame(replaced ...browserTab) (browserTab, error) {
	old := map[string]bool{}
	for _, f := range replaced {
		old[f.(*FirefoxTab).browsingContext] = true
	}
	var frame string
	ok := waitUntil(time.Minute, func() bool {
		var tree struct {
			Contexts []struct {
				Children []struct{ Context string }
			}
		}
		err := tab.bidi.call(tab.ctx, "browsingContext.getTree", map[string]any{"root": tab.top, "maxDepth": 1}, &tree)
		if err != nil || len(tree.Contexts) != 1 {
			return false
		}
		for _, c := range tree.Contexts[0].Children {
			if !old[c.Context] {
				frame = c.Context
				return true
			}
		}
		return false
	})
	if !ok {
		return nil, errors.New("waited a minute for the gadget's frame")
	}
	return &FirefoxTab{t: tab.t, ctx: tab.ctx, bidi: tab.bidi, browsingContext: frame, top: tab.top}, nil
}

// logEvent writes a log.entryAdded event to the test's log: a console
// call, or an uncaught error, of any frame in the browser.
func (tab *FirefoxTab) logEvent(method string, params json.RawMessage) {
	if method != "log.entryAdded" {
		return
	}
	var e struct{ Type, Level, Method, Text string }
	if err := json.Unmarshal(params, &e); err != nil {
		tab.t.Logf("browser log: %s (%v)", params, err)
		return
	}
	if e.Type == "console" {
		tab.t.Logf("browser console.%s: %s", e.Method, e.Text)
	} else {
		tab.t.Logf("browser %s %s: %s", e.Type, e.Level, e.Text)
	}
}

// Navigate loads url in the tab and waits for its load event.
func (tab *FirefoxTab) Navigate(url string) error {
	return tab.bidi.call(tab.ctx, "browsingContext.navigate", map[string]any{"context": tab.browsingContext, "url": url, "wait": "complete"}, nil)
}

// Evaluate runs the JavaScript expression js in the tab's page, awaits it
// if it is a promise, and decodes its value, as JSON, into out (if not nil).
func (tab *FirefoxTab) Evaluate(js string, out any) error {
	var res struct {
		Type   string // "success" or "exception"
		Result struct {
			Type  string
			Value json.RawMessage
		}
		ExceptionDetails struct{ Text string }
	}
	err := tab.bidi.call(tab.ctx, "script.evaluate", map[string]any{
		// The value comes back as JSON text, which decodes into any Go value,
		// rather than as BiDi's typed remote values.
		"expression":   "(async () => JSON.stringify(await (" + js + "\n)))()",
		"target":       map[string]any{"context": tab.browsingContext},
		"awaitPromise": true,
	}, &res)
	switch {
	case err != nil:
		return err
	case res.Type == "exception":
		return fmt.Errorf("evaluating %s: %s", js, res.ExceptionDetails.Text)
	case out == nil:
		return nil
	case res.Result.Type != "string":
		return fmt.Errorf("evaluating %s: its value is %s, not JSON", js, res.Result.Type)
	}
	var text string
	if err := json.Unmarshal(res.Result.Value, &text); err != nil {
		return err
	}
	return json.Unmarshal([]byte(text), out)
}

// AddPreloadScript has every document loaded in the tab from now on run
// js, in the page's own realm, before its own scripts.
func (tab *FirefoxTab) AddPreloadScript(js string) error {
	return tab.bidi.call(tab.ctx, "script.addPreloadScript", map[string]any{
		"functionDeclaration": "() => {" + js + "\n}",
		"contexts":            []string{tab.browsingContext},
	}, nil)
}

// Click clicks the mouse's left button at (x, y), in CSS pixels from the
// top left of the tab's viewport: a real input event, which reaches a
// frame of another origin that the page cannot script.
func (tab *FirefoxTab) Click(x, y float64) error {
	return tab.performActions(map[string]any{
		"context": tab.browsingContext,
		"actions": []any{map[string]any{
			"type":       "pointer",
			"id":         "mouse",
			"parameters": map[string]any{"pointerType": "mouse"},
			"actions": []any{
				map[string]any{"type": "pointerMove", "x": int(x), "y": int(y)},
				map[string]any{"type": "pointerDown", "button": 0},
				map[string]any{"type": "pointerUp", "button": 0},
			},
		}},
	})
}

// Type presses and releases the keys of text, one after another, as a
// user's keyboard would, to the element that has the focus.
func (tab *FirefoxTab) Type(text string) error {
	var keys []any
	for _, r := range text {
		keys = append(keys, map[string]any{"type": "keyDown", "value": string(r)}, map[string]any{"type": "keyUp", "value": string(r)})
	}
	return tab.performActions(map[string]any{
		"context": tab.browsingContext,
		"actions": []any{map[string]any{"type": "key", "id": "keyboard", "actions": keys}},
	})
}

// performActions performs input actions in the tab, brought to the front
// first: input goes to the tab in front, as a user's would.
func (tab *FirefoxTab) performActions(params map[string]any) error {
	if err := tab.bidi.call(tab.ctx, "browsingContext.activate", map[string]any{"context": tab.top}, nil); err != nil {
		return err
	}
	return tab.bidi.call(tab.ctx, "input.performActions", params, nil)
}

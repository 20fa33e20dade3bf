package browsertest

import (
	"encoding/json"
	"strings"
	"testing"
)

// The page that holds the frames keeps secrets where a frame might look:
// its DOM, its cookies, its storage.
const pageSecrets = `
  document.body.dataset.secret = "S-page-dom";
  document.cookie = "secret=S-page-cookie; SameSite=Strict";
  localStorage.setItem("secret", "S-page-localstorage");
  sessionStorage.setItem("secret", "S-page-sessionstorage");`

// otherGadget keeps secrets of its own, and logs one to its console a
// moment after it loaded, by which time the reader has tried to take over
// its console port; in the shell it also asks the frame runtime for its
// session, which the reader tries to hand it.
var otherGadget = script(`
  window.gadgetd?.session();
  window.secret = "S-gadget-window";
  document.body.dataset.secret = "S-gadget-dom";
  addEventListener("load", () => setTimeout(() => console.log("S-gadget-console"), 500));
  done();`)

// readerGadget tries to read every secret, and to hand the other gadget's
// console forwarder a port of its own; it reports what it got.
var readerGadget = script(`
  const found = {};
  const attempt = (name, f) => {
    try { found[name] = String(f()); } catch (e) { found[name] = "refused: " + e.name; }
  };
  let other = null;
  for (let i = 0; i < parent.frames.length; i++) {
    if (parent.frames[i] !== window) { other = parent.frames[i]; }
  }
  const hijack = new MessageChannel();
  hijack.port1.onmessage = (ev) => { found["the other gadget's console"] = JSON.stringify(ev.data); };
  other.postMessage({gadgetd: "console"}, "*", [hijack.port2]);
  // A session port posted to the other frame: its runtime, had it taken
  // the port, would bootstrap over it, and the reader could answer as its
  // server.
  const session = new MessageChannel();
  session.port1.onmessage = (ev) => { found["the other gadget's session"] = "S-gadget-session: a message of " + (ev.data?.byteLength ?? 0) + " bytes"; };
  other.postMessage({gadgetd: "port"}, "*", [session.port2]);
  setTimeout(() => {
    attempt("the page's DOM", () => parent.document.body.dataset.secret);
    attempt("the page's cookies", () => parent.document.cookie);
    attempt("the page's localStorage", () => parent.localStorage.getItem("secret"));
    attempt("cookies", () => document.cookie);
    attempt("localStorage", () => localStorage.getItem("secret"));
    attempt("sessionStorage", () => sessionStorage.getItem("secret"));
    attempt("the other gadget's window", () => other.secret);
    attempt("the other gadget's DOM", () => other.document.body.dataset.secret);
  }, 300);
  setTimeout(() => done(JSON.stringify(found)), 1500);`)

// readSecrets opens the other gadget, then the reader, in the page at url
// in a fresh b, and returns what the reader found.
func readSecrets(t *testing.T, b browser, url string, protected bool) map[string]string {
	t.Helper()
	self := &witness{httpAddr: "127.0.0.1:9"} // the probes here request nothing
	docs := map[string]string{
		"1-other":  probeDocument("1-other", otherGadget, self, self),
		"2-reader": probeDocument("2-reader", readerGadget, self, self),
	}
	tab := b.newTab(t)
	openFrames(t, tab, url, protected, docs, pageSecrets)
	notes := probesReported(t, tab, map[string]string{"1-other": "", "2-reader": ""})
	found := map[string]string{}
	if err := json.Unmarshal([]byte(notes["2-reader"]), &found); err != nil {
		t.Fatalf("the reader's report %q: %v", notes["2-reader"], err)
	}
	return found
}

// TestAGadgetFrameCannotReadThePageOrAnotherGadget: a gadget's frame reads
// none of the shell page's DOM, cookies or storage, has no cookies or
// storage of its own to share with another gadget, cannot read another
// gadget's frame, and cannot take over its console. The control run, in
// plain same-origin iframes, reads them all, so each check can fail.
func TestAGadgetFrameCannotReadThePageOrAnotherGadget(t *testing.T) {
	framesCannotReadThePageOrAnotherGadget(t, inChromium)
}

// framesCannotReadThePageOrAnotherGadget runs the reader in b, unprotected
// and then in the shell's frames.
func framesCannotReadThePageOrAnotherGadget(t *testing.T, b browser) {
	p := newPages(t)

	control := readSecrets(t, b, p.control, false)
	for _, what := range []string{"the page's DOM", "the page's cookies", "the page's localStorage", "cookies", "localStorage", "sessionStorage", "the other gadget's window", "the other gadget's DOM"} {
		if !strings.Contains(control[what], "S-") {
			t.Errorf("control: the unprotected reader did not read %s (%q): the protected check proves nothing", what, control[what])
		}
	}

	protected := readSecrets(t, b, p.shell, true)
	if len(protected) < 8 {
		t.Errorf("the protected reader tried only %d reads: %v", len(protected), protected)
	}
	for what, got := range protected {
		if strings.Contains(got, "S-") {
			t.Errorf("a gadget frame read %s: %q", what, got)
		}
	}
}

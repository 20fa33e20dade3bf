package browsertest

// The isolation tests: gadget UIs that try every way out of their frame,
// each counted by a loopback witness. Each test runs its probes twice: in a
// control page with none of the protections (no sandbox attribute, no
// policy, no prelude), where every probe must reach the witness, so the
// test could fail; and in the real shell page, through the real frame
// builder (web/shell/sandbox.js), where none may.

import (
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/web"
)

// grace is how long a protected run waits, after every probe said it had
// tried, for a request still on its way. The control run shows that the
// probes arrive well within it when nothing stops them.
const grace = 2 * time.Second

// script wraps JavaScript in a script element.
func script(js string) string { return "<script>" + js + "</script>" }

// afterLoad reports the probe done once the page has loaded: its
// subresources have been fetched or refused by then.
var afterLoad = script(`addEventListener("load", () => done())`)

// rtc tries to send a STUN binding request to the witness's UDP listener,
// which ICE gathering does as soon as a local description is set.
func rtc(stunURL string) string {
	return `try {
  const pc = new RTCPeerConnection({iceServers: [{urls: "` + stunURL + `"}]});
  pc.createDataChannel("probe");
  pc.createOffer().then((o) => pc.setLocalDescription(o));
  done("made an RTCPeerConnection");
} catch (e) { done(String(e)); }`
}

// networkProbes are gadget UIs, each trying one way to reach the witness
// ({{base}}, {{ws}}, {{stun:…}}; {{nonce}} is the shell page's nonce, as if
// the gadget had learned it). Each reports, by calling done, that it tried.
var networkProbes = map[string]string{
	"fetch": script(`fetch("{{base}}/p/fetch", {mode: "no-cors"}).catch(() => {}); done();`),
	"xhr":   script(`const x = new XMLHttpRequest(); x.open("GET", "{{base}}/p/xhr"); x.send(); done();`),
	// Firefox throws when the policy refuses the socket; Chromium does not.
	"websocket":   script(`try { new WebSocket("{{ws}}/p/websocket"); done(); } catch (e) { done(String(e)); }`),
	"eventsource": script(`new EventSource("{{base}}/p/eventsource"); done();`),
	"beacon":      script(`navigator.sendBeacon("{{base}}/p/beacon", "x"); done();`),
	// A script allowed by the frame's policy still may not import: the
	// shell's nonce it carries must not let a module in.
	"import": script(`import("{{base}}/p/import").catch(() => {}); done();`),
	"img":    `<img src="{{base}}/p/img">` + afterLoad,
	"script": `<script src="{{base}}/p/script"></script>` + afterLoad,
	"style":  `<link rel="stylesheet" href="{{base}}/p/style">` + afterLoad,
	"font":   `<style>@font-face { font-family: probe; src: url("{{base}}/p/font"); } p { font-family: probe; }</style><p>probe</p>` + afterLoad,
	"object": `<object data="{{base}}/p/object" type="text/html"></object>` + afterLoad,
	"form":   `<form method="post" action="{{base}}/p/form"><input name="a" value="b"></form>` + script(`done(); document.forms[0].submit();`),
	// Firefox throws when the sandbox refuses the popup; Chromium does not.
	"popup":  script(`try { window.open("{{base}}/p/popup"); done(); } catch (e) { done(String(e)); }`),
	"webrtc": script(rtc("{{stun:webrtc}}")),
	// A nested srcdoc frame inherits the frame's policy but not its
	// prelude: a script that did not start with the prelude must not run
	// there, even one with the shell's nonce.
	"nested-webrtc": `<iframe srcdoc="` + html.EscapeString(`<script nonce="{{nonce}}">const done = () => {};`+rtc("{{stun:nested-webrtc}}")+`</script>`) + `"></iframe>` + afterLoad,
	// Nor in a nested blank frame, whose fresh window the prelude never
	// saw: the sandbox gives that frame an opaque origin of its own, so
	// the gadget cannot reach into it.
	"blank-webrtc": script(`
  const blank = document.createElement("iframe");
  document.body.append(blank);
  try {
    const pc = new blank.contentWindow.RTCPeerConnection({iceServers: [{urls: "{{stun:blank-webrtc}}"}]});
    pc.createDataChannel("probe");
    pc.createOffer().then((o) => pc.setLocalDescription(o));
    done("made one");
  } catch (e) { done(String(e)); }`),
	// Nor may an allowed script, re-run there: a gadget's script that clones
	// itself into a nested frame (with the nonce) to run where no prelude
	// has run. Every allowed script starts with the prelude, so it runs
	// there first.
	"replay-webrtc": script(`
  if (typeof RTCPeerConnection === "function") {
    const pc = new RTCPeerConnection({iceServers: [{urls: "{{stun:replay-webrtc}}"}]});
    pc.createDataChannel("probe");
    pc.createOffer().then((o) => pc.setLocalDescription(o));
  }
  if (parent === top) {
    const nested = document.createElement("iframe");
    nested.srcdoc = "<script nonce=\"{{nonce}}\">" + document.currentScript.textContent + "<\/script>";
    document.body.append(nested);
    addEventListener("load", () => done());
  }`),
}

// navigationProbes navigate a frame: a nested one, or the gadget's own.
// The policies refuse each navigation before its request is sent; they
// run with a witness of their own, which counts connections too: with
// preloading on, Chromium opens a connection to a refused navigation's
// target (see TestPreloadingOffIsWhatKeepsAFramesConnectionsOffTheNetwork).
var navigationProbes = map[string]string{
	"frame":   `<iframe src="{{base}}/p/frame"></iframe>` + afterLoad,
	"self":    script(`done(); location.href = "{{base}}/p/self";`),
	"refresh": `<meta http-equiv="refresh" content="0; url={{base}}/p/refresh">` + afterLoad,
	"ping":    `<a href="{{base}}/p/ping-navigation" ping="{{base}}/p/ping">probe</a>` + script(`done(); document.querySelector("a").click();`),
}

// preconnectProbes ask the browser to connect to the witness, which CSP
// does not govern. No request follows, only a connection, so they are not
// in probeGroups, whose control counts requests; the preloading test is
// their control.
var preconnectProbes = map[string]string{
	"preconnect": `<link rel="preconnect" href="{{base}}/p/preconnect">` + afterLoad,
	"preconnect-script": script(`
  const link = document.createElement("link");
  link.rel = "preconnect";
  link.href = "{{base}}/p/preconnect-script";
  document.head.append(link);
  done();`),
}

// prefetchProbe runs in a page of its own: Firefox drops the prefetches it
// has queued when another document starts to load in the page, as the
// network probes' nested frames do, so that among them even the control's
// prefetch never leaves.
var prefetchProbe = map[string]string{
	"prefetch": `<link rel="prefetch" href="{{base}}/p/prefetch">` + afterLoad,
}

// topProbe navigates the page that holds the frame; it runs alone, last.
var topProbe = map[string]string{
	"top": script(`done(); top.location.href = "{{base}}/p/top";`),
}

// A probeGroup is probes that run together, in a fresh browser with a
// witness of its own.
type probeGroup map[string]string

// probeGroups are the probes in the order they run.
var probeGroups = []probeGroup{networkProbes, prefetchProbe, navigationProbes, topProbe}

// probeDocument is a probe's whole gadget UI: done, then the probe.
// Its requests go to target's HTTP address, its STUN packets to udp's.
func probeDocument(name, body string, target, udp *witness) string {
	r := []string{"{{base}}", "http://" + target.httpAddr, "{{ws}}", "ws://" + target.httpAddr}
	for ch, addr := range udp.udpAddrs {
		r = append(r, "{{stun:"+ch+"}}", "stun:"+addr)
	}
	done := script(`function done(note) { parent.postMessage({probe: ` + jsString(name) + `, note: String(note ?? "")}, "*"); }`)
	return "<!doctype html><html><head><title>" + name + "</title></head><body>" + done +
		strings.NewReplacer(r...).Replace(body) + "</body></html>"
}

func jsString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// pages serves the shell (the protected run) and, on another origin, a
// bare page with no policy at all (the control run). The shell's server
// also counts requests for /p/ paths: a probe may aim at the shell's own
// origin, which the shell's policy allows and the frame's must not.
type pages struct {
	shell, control string   // URLs
	shellWitness   *witness // counts requests to the shell's origin
}

func newPages(t *testing.T) pages {
	sw := newCounter()
	mux := http.NewServeMux()
	mux.Handle("/", web.Handler())
	mux.HandleFunc("/p/", sw.serveHTTP)
	shell := httptest.NewServer(mux)
	t.Cleanup(shell.Close)
	sw.httpAddr = shell.Listener.Addr().String()
	control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><html><head><title>control</title></head><body></body></html>")
	}))
	t.Cleanup(control.Close)
	return pages{shell: shell.URL + "/", control: control.URL + "/", shellWitness: sw}
}

// openFrames opens one frame per probe in the page at url and returns the
// shell page's nonce ("" in the control page). protected builds each frame
// with web/shell/sandbox.js, as the shell does; otherwise each is a plain
// iframe showing the probe as it is. Messages from the frames collect in
// window.probeReports.
// setup, if not empty, is JavaScript run in the page first. Frames open in
// the order of their names.
func openFrames(t *testing.T, tab browserTab, url string, protected bool, probes map[string]string, setup string) string {
	t.Helper()
	if err := tab.Navigate(url); err != nil {
		t.Fatal(err)
	}
	docs, err := json.Marshal(probes)
	if err != nil {
		t.Fatal(err)
	}
	js := fmt.Sprintf(`(async (docs, protected) => {
  %s;
  window.probeReports = [];
  addEventListener("message", (ev) => { if (ev.data && ev.data.probe) probeReports.push(ev.data); });
  const sandbox = protected ? await import("/shell/sandbox.js") : null;
  const nonce = protected ? sandbox.shellNonce() : "";
  // The shell's runtimes, as it gives them to every frame.
  const runtimes = protected ? [sandbox.CONSOLE_FORWARDER, await (await fetch("/static/frame.js")).text()] : [];
  for (const [name, doc] of Object.entries(docs).sort()) {
    const ui = doc.replaceAll("{{nonce}}", nonce);
    let frame;
    if (protected) {
      frame = await sandbox.createFrame(ui, {nonce, runtimes});
    } else {
      frame = document.createElement("iframe");
      frame.srcdoc = ui;
    }
    frame.title = name;
    document.body.append(frame);
  }
  return nonce;
})(%s, %t)`, setup, docs, protected)
	var nonce string
	if err := tab.Evaluate(js, &nonce); err != nil {
		t.Fatalf("opening the probe frames: %v", err)
	}
	return nonce
}

// probesReported waits until every probe reported that it tried, and
// returns their notes; a probe that never reports fails the test, since a
// probe that did not run proves nothing.
func probesReported(t *testing.T, tab browserTab, probes map[string]string) map[string]string {
	t.Helper()
	notes := map[string]string{}
	type report struct{ Probe, Note string }
	ok := waitUntil(60*time.Second, func() bool {
		var reports []report
		if err := tab.Evaluate(`window.probeReports || []`, &reports); err != nil {
			return false
		}
		for _, r := range reports {
			notes[r.Probe] = r.Note
		}
		return len(notes) >= len(probes)
	})
	if !ok {
		var missing []string
		for name := range probes {
			if _, ok := notes[name]; !ok {
				missing = append(missing, name)
			}
		}
		slices.Sort(missing)
		t.Fatalf("these probes never reported that they ran: %v", missing)
	}
	return notes
}

func udpChannels(probes map[string]string) []string {
	var chs []string
	for name, doc := range probes {
		if strings.Contains(doc, "{{stun:") {
			chs = append(chs, name)
		}
	}
	return chs
}

// probeRun is one run of a group of probes.
type probeRun struct {
	browser
	protected bool
	// atShell aims the probes' requests at the shell's own origin rather
	// than at another one.
	atShell bool
}

func (r probeRun) String() string {
	s := r.name + ", " + map[bool]string{true: "protected", false: "unprotected"}[r.protected]
	return s + map[bool]string{true: ", at the shell's origin", false: ", at another origin"}[r.atShell]
}

// start opens the probes in a fresh browser and returns its tab, the
// witness that counts requests (the shell's, or one of its own) and the
// one that counts STUN packets.
func (r probeRun) start(t *testing.T, probes map[string]string) (tab browserTab, requests, udp *witness) {
	t.Helper()
	p := newPages(t)
	udp = newWitness(t, udpChannels(probes)...)
	requests = udp
	if r.atShell {
		requests = p.shellWitness
	}
	docs := map[string]string{}
	for name, body := range probes {
		docs[name] = probeDocument(name, body, requests, udp)
	}
	tab = r.newTab(t)
	url := p.control
	if r.protected {
		url = p.shell
	}
	openFrames(t, tab, url, r.protected, docs, "")
	return tab, requests, udp
}

// TestWithoutTheProtectionsEveryProbeReachesTheNetwork is the control: the
// same probes, in plain iframes of a page with no policy, reach the witness
// by every channel. Were one not to, the protected test could not fail for
// that channel.
func TestWithoutTheProtectionsEveryProbeReachesTheNetwork(t *testing.T) {
	everyProbeReachesTheNetwork(t, inChromium, probeGroups)
}

// everyProbeReachesTheNetwork runs the groups' probes unprotected in b,
// at another origin and at the shell's, and fails t unless every probe
// reached its witness.
func everyProbeReachesTheNetwork(t *testing.T, b browser, groups []probeGroup) {
	for _, g := range groups {
		for _, run := range []probeRun{{browser: b, atShell: false}, {browser: b, atShell: true}} {
			_, requests, udp := run.start(t, g)
			missing := func() []string {
				counts, _ := requests.counts()
				udpCounts, _ := udp.counts()
				var missing []string
				for name := range g {
					if counts[name] == 0 && udpCounts[name] == 0 {
						missing = append(missing, name)
					}
				}
				slices.Sort(missing)
				return missing
			}
			if !waitUntil(60*time.Second, func() bool { return len(missing()) == 0 }) {
				t.Errorf("%v: these probes never reached the witness: %v", run, missing())
			}
		}
	}
}

// TestAGadgetFrameReachesNoNetwork: in the shell, a gadget UI's frame
// reaches nothing, neither another origin nor the shell's own, by any
// channel the probes try, though every probe ran.
func TestAGadgetFrameReachesNoNetwork(t *testing.T) {
	framesReachNoNetwork(t, inChromium, probeGroups)
}

// framesReachNoNetwork runs the groups' probes in the shell's frames in b,
// aimed at another origin and at the shell's, and fails t if any reached
// its witness, or did not run.
func framesReachNoNetwork(t *testing.T, b browser, groups []probeGroup) {
	for _, g := range groups {
		for _, run := range []probeRun{{browser: b, protected: true, atShell: false}, {browser: b, protected: true, atShell: true}} {
			tab, requests, udp := run.start(t, g)
			notes := probesReported(t, tab, g)
			time.Sleep(grace)
			counts, conns := requests.counts()
			udpCounts := map[string]int{}
			if udp != requests {
				udpCounts, _ = udp.counts()
			}
			if len(counts) != 0 || len(udpCounts) != 0 {
				t.Errorf("%v: the witness was reached: requests by channel %v, STUN packets %v", run, counts, udpCounts)
			}
			// At the shell's origin the shell page's own connections count.
			if !run.atShell && conns != 0 {
				t.Errorf("%v: the witness was reached: %d connections", run, conns)
			}
			if note, ok := notes["webrtc"]; ok && !strings.Contains(note, "RTCPeerConnection is not defined") {
				t.Errorf("%v: the webrtc probe reported %q, want RTCPeerConnection to be gone", run, note)
			}
			if _, ok := g["top"]; ok {
				var title string
				if err := tab.Evaluate(`document.title`, &title); err != nil || title != "gadgetd" {
					t.Errorf("%v: after the top probe the page's title is %q (%v), want the shell's", run, title, err)
				}
			}
		}
	}
}

// inChromiumPreloading is Chromium with its default preferences: preloading
// on, as docs/SECURITY.md asks users not to have it.
var inChromiumPreloading = browser{"Chromium with preloading on", func(t testing.TB) browserTab {
	return chromium{NewTabWithPreferences(t, "")}
}}

// TestPreloadingOffIsWhatKeepsAFramesConnectionsOffTheNetwork: a gadget's
// frame asks for preconnects and navigations its policies refuse. In a
// Chromium with preloading off (the setting docs/SECURITY.md asks for),
// none of them opens a connection to the witness. With preloading on, they
// do, which is why the setting is asked for, and how this test could fail.
func TestPreloadingOffIsWhatKeepsAFramesConnectionsOffTheNetwork(t *testing.T) {
	probes := maps.Clone(navigationProbes)
	maps.Copy(probes, preconnectProbes)
	for _, b := range []browser{inChromiumPreloading, inChromium} {
		run := probeRun{browser: b, protected: true}
		tab, requests, _ := run.start(t, probes)
		probesReported(t, tab, probes)
		connected := func() bool { _, conns := requests.counts(); return conns != 0 }
		if b.name == inChromiumPreloading.name {
			if !waitUntil(60*time.Second, connected) {
				t.Errorf("%v: no probe made the browser connect; the control shows nothing", run)
			}
			continue
		}
		time.Sleep(grace)
		if counts, conns := requests.counts(); len(counts) != 0 || conns != 0 {
			t.Errorf("%v: the witness was reached: requests by channel %v, %d connections", run, counts, conns)
		}
	}
}

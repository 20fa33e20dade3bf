package browsertest

import (
	"strings"
	"testing"
)

// marker is a gadget script that reports, once the page has loaded, what a
// gadget's script sees: whether RTCPeerConnection exists (the prelude ran
// first), whether a script it inserts runs (the policy is in force), and
// whether any code that should never run did. The inserted script carries
// the shell page's nonce, so that only the frame's own policy refuses it. extra is more JavaScript in
// the same script, to see that its text survives the builder (were its hash
// wrong, the script would not run, and report nothing).
func marker(extra string) string {
	return script(extra + `
  const inserted = document.createElement("script");
  inserted.textContent = "window.insertedRan = true";
  inserted.nonce = "{{nonce}}"; // passes the shell's policy: only the frame's may refuse it
  document.head.append(inserted);
  document.getElementById("js-link")?.click();
  addEventListener("load", () => setTimeout(() => done([
    typeof RTCPeerConnection, window.insertedRan === true, window.forbiddenRan === true,
  ].join(",")), 200));`)
}

// builderCases are gadget UIs whose markup or script text could trip a
// builder that pasted strings together.
var builderCases = map[string]string{
	"plain":                   marker(""),
	"text before the doctype": `hello<!doctype html><html><head>` + marker(""),
	"a weaker policy of its own": `<head><meta http-equiv="Content-Security-Policy" content="script-src * 'unsafe-inline' 'unsafe-eval'; connect-src *"></head><body>` +
		marker(""),
	"markup after the end of html": `<html><head></head><body></body></html>` + marker(""),
	"comment marks in script text": marker(`const open = "<!--", close = "-->", tag = "<script>";`),
	"non-ASCII and line breaks":    marker("const s = \"h\u00e9llo \u2603\";\r\nconst t = '\u2028';\r\n"),
	"plaintext after the script":   marker("") + `<plaintext><script>window.forbiddenRan = true</script>`,
	"an unclosed comment after":    marker("") + `<!-- <meta http-equiv="Content-Security-Policy" content="script-src *">`,
	"code outside allowed scripts": marker("") +
		`<img src="data:," onerror="window.forbiddenRan = true">` +
		`<svg><script>window.forbiddenRan = true</script></svg>` +
		`<script type="text/plain">window.forbiddenRan = true</script>` +
		`<a id="js-link" href="javascript:window.forbiddenRan = true">link</a>`,
}

// TestTheFrameBuilderPutsPolicyAndPreludeFirstWhateverTheMarkup: whatever
// a gadget's HTML holds, its allowed scripts run with the prelude already
// run and the frame's policy in force, and nothing else runs.
func TestTheFrameBuilderPutsPolicyAndPreludeFirstWhateverTheMarkup(t *testing.T) {
	builtFramesRunOnlyTheirScripts(t, inChromium)
}

// builtFramesRunOnlyTheirScripts runs builderCases in the shell's frames in b.
func builtFramesRunOnlyTheirScripts(t *testing.T, b browser) {
	self := &witness{httpAddr: "127.0.0.1:9"} // the cases request nothing
	docs := map[string]string{}
	for name, body := range builderCases {
		docs[name] = probeDocument(name, body, self, self)
	}
	tab := b.newTab(t)
	openFrames(t, tab, newPages(t).shell, true, docs, "")
	for name, note := range probesReported(t, tab, builderCases) {
		if note != "undefined,false,false" {
			t.Errorf("%s: the gadget's script saw %q, want RTCPeerConnection undefined, its inserted script refused, nothing forbidden run", name, strings.Split(note, ","))
		}
	}
}

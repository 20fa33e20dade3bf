package browsertest

import "time"

// A browserTab is a tab a test drives, in Chromium or in Firefox, or a
// frame in such a tab: what the tests that run in both browsers need of it.
type browserTab interface {
	// Navigate loads url and waits for its load event.
	Navigate(url string) error
	// Evaluate runs the expression js, awaits it if it is a promise, and
	// decodes its value, as JSON, into out (if not nil).
	Evaluate(js string, out any) error
	// Click clicks the left mouse button at (x, y) in the viewport (of
	// the frame, for a frame), a real input event.
	Click(x, y float64) error
	// Type presses and releases the keys of text, one after another, as
	// real input events to the element that has the focus.
	Type(text string) error
	// AddPreloadScript has every document loaded in the tab from now on run
	// js before its own scripts.
	AddPreloadScript(js string) error
	// OpenTab opens another tab in the same browser, as a user would.
	OpenTab() (browserTab, error)
	// GadgetFrame waits (a minute at most) for the open gadget's frame in
	// the tab, other than the replaced ones (from earlier calls, which the
	// page has since replaced), and returns it, to script and click in as
	// a user's input and DevTools can: the page itself cannot reach the
	// frame, which is of another origin.
	GadgetFrame(replaced ...browserTab) (browserTab, error)
}

// waitUntil polls cond every 100 ms until it holds or d passes.
func waitUntil(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

package browsertest

// The shell and the gadget frame in Firefox (firefox-esr, over WebDriver
// BiDi): the same harness, probes and checks as the Chromium tests, in the
// other browser the shell must work in.

import (
	"maps"
	"testing"
)

// TestFirefoxAUserLogsInCreatesACounterAndUsesItInItsFrame: in Firefox,
// from the login link, a user creates a counter, clicks +1 in its frame,
// and the frame shows the value the gadget returned (the console panel
// shows the frame's console.log of it).
func TestFirefoxAUserLogsInCreatesACounterAndUsesItInItsFrame(t *testing.T) {
	RequireFirefox(t) // before the work of starting a server
	g := serveCounter(t)
	tab := inFirefox.newTab(t)
	logInAndCreateCounter(t, g, tab)
	clickIn(t, tab, incrementX)
	waitIn(t, tab, "the value after +1", consoleText+`.includes("counter value 1")`)
	clickIn(t, tab, incrementX)
	waitIn(t, tab, "the value after +1 +1", consoleText+`.includes("counter value 2")`)
}

// TestFirefoxTwoTabsOnOneGadgetSeeEachOthersChangesLive: in Firefox, the
// listener each tab's frame hands the gadget's watch is called, from inside
// the wasm sandbox, when the other tab increments.
func TestFirefoxTwoTabsOnOneGadgetSeeEachOthersChangesLive(t *testing.T) {
	RequireFirefox(t)
	g := serveCounter(t)
	tab := NewFirefoxTab(t)
	other, err := tab.OpenTab()
	if err != nil {
		t.Fatal(err)
	}
	twoTabsSeeEachOthersChanges(t, g, tab, other)
}

// TestFirefoxADroppedFrameSocketReconnectsWithoutReloadingTheGadget: in
// Firefox, when the frame's websocket drops, the shell gets a new ticket
// and socket and hands the frame a new port; the frame, not reloaded, goes
// on working.
func TestFirefoxADroppedFrameSocketReconnectsWithoutReloadingTheGadget(t *testing.T) {
	RequireFirefox(t)
	g := serveCounter(t)
	droppedFrameSocketReconnects(t, g, inFirefox.newTab(t))
}

// firefoxProbes are the probes the Firefox tests run. Left out are those
// whose control run reaches no witness in Firefox, so that they could prove
// nothing there (prefetch: nothing from another origin; ping: Firefox sends
// no pings by default).
var firefoxProbes = []probeGroup{
	{probes: without(networkProbes, "prefetch")},
	{probes: without(navigationProbes, "ping"), connectionsAreAGap: true},
	{probes: topProbe},
}

// without returns a copy of probes without the named ones.
func without(probes map[string]string, names ...string) map[string]string {
	m := maps.Clone(probes)
	for _, name := range names {
		delete(m, name)
	}
	return m
}

// TestFirefoxWithoutTheProtectionsEveryProbeReachesTheNetwork is the
// control of the next test: in plain iframes the probes reach the witness.
func TestFirefoxWithoutTheProtectionsEveryProbeReachesTheNetwork(t *testing.T) {
	everyProbeReachesTheNetwork(t, inFirefox, firefoxProbes)
}

// TestFirefoxAGadgetFrameReachesNoNetwork: in Firefox, a gadget frame in
// the shell reaches neither another origin nor the shell's, by fetch, XHR,
// WebSocket or the other channels of firefoxProbes: zero requests, and
// zero connections at another origin (but for navigations, as in
// Chromium).
func TestFirefoxAGadgetFrameReachesNoNetwork(t *testing.T) {
	framesReachNoNetwork(t, inFirefox, firefoxProbes)
}

// TestFirefoxAGadgetFrameCannotReadThePageOrAnotherGadget: in Firefox, a
// gadget's frame reads none of the shell page's DOM, cookies or storage,
// nor another gadget's frame; the control run reads them all.
func TestFirefoxAGadgetFrameCannotReadThePageOrAnotherGadget(t *testing.T) {
	framesCannotReadThePageOrAnotherGadget(t, inFirefox)
}

// TestFirefoxTheFrameBuilderPutsPolicyAndPreludeFirstWhateverTheMarkup: in
// Firefox too, whatever a gadget's HTML holds, its allowed scripts run with
// the prelude already run and the frame's policy in force, and nothing else
// runs.
func TestFirefoxTheFrameBuilderPutsPolicyAndPreludeFirstWhateverTheMarkup(t *testing.T) {
	builtFramesRunOnlyTheirScripts(t, inFirefox)
}

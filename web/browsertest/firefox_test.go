package browsertest

// The shell, the gadget frame and the examples in Firefox (firefox-esr,
// over WebDriver BiDi): the same test bodies as the Chromium tests, in the
// other browser the shell must work in.

import (
	"testing"
)

// TestFirefoxAUserLogsInCreatesACounterAndUsesItInItsFrame: in Firefox,
// from the login link, a user creates a counter, clicks +1 in its frame,
// and the frame shows the value the gadget returned (the console panel
// shows the frame's console.log of it).
func TestFirefoxAUserLogsInCreatesACounterAndUsesItInItsFrame(t *testing.T) {
	aUserCreatesACounterAndUsesIt(t, inFirefox)
}

// TestFirefoxTwoTabsOnOneGadgetSeeEachOthersChangesLive: in Firefox, the
// listener each tab's frame hands the gadget's watch is called, from inside
// the wasm sandbox, when the other tab increments.
func TestFirefoxTwoTabsOnOneGadgetSeeEachOthersChangesLive(t *testing.T) {
	twoTabsSeeEachOthersChanges(t, inFirefox)
}

// TestFirefoxADroppedFrameSocketReconnectsWithoutReloadingTheGadget: in
// Firefox, when the frame's websocket drops, the shell gets a new ticket
// and socket and hands the frame a new port; the frame, not reloaded, goes
// on working.
func TestFirefoxADroppedFrameSocketReconnectsWithoutReloadingTheGadget(t *testing.T) {
	droppedFrameSocketReconnects(t, inFirefox)
}

// TestFirefoxAWrongTokenShowsTheLoginFormWithTheServersReason: in Firefox,
// a refused token ends at the login form with the server's reason, is
// forgotten, and typing the right one logs in.
func TestFirefoxAWrongTokenShowsTheLoginFormWithTheServersReason(t *testing.T) {
	aWrongTokenShowsTheLoginForm(t, inFirefox)
}

// TestFirefoxAUserRemovesAGadgetFromTheShell: in Firefox, removing takes a
// second click, and then the gadget is gone from the list and the server.
func TestFirefoxAUserRemovesAGadgetFromTheShell(t *testing.T) {
	aUserRemovesAGadget(t, inFirefox)
}

// TestFirefoxTheLogsPanelShowsTheGadgetsLog: in Firefox, the logs panel
// shows the line the gadget logged when the frame's listener failed.
func TestFirefoxTheLogsPanelShowsTheGadgetsLog(t *testing.T) {
	theLogsPanelShowsTheGadgetsLog(t, inFirefox)
}

// TestFirefoxAServerItCannotReachKeepsTheTokenAndOffersARetry: in Firefox,
// when /ws does not answer, the shell says so and keeps the token.
func TestFirefoxAServerItCannotReachKeepsTheTokenAndOffersARetry(t *testing.T) {
	aServerItCannotReachKeepsTheToken(t, inFirefox)
}

// TestFirefoxTheCounterExampleCountsInItsFrame: examples/counter in
// Firefox: +1 in its frame shows the gadget's value, which a fresh page
// reads again.
func TestFirefoxTheCounterExampleCountsInItsFrame(t *testing.T) {
	theCounterExampleCounts(t, inFirefox)
}

// TestFirefoxTwoTabsOnOneCounterExampleSeeEachOthersChangesLive: in
// Firefox, the gadget calls each frame's JS listener when the other tab
// increments, and drops none.
func TestFirefoxTwoTabsOnOneCounterExampleSeeEachOthersChangesLive(t *testing.T) {
	twoTabsOnOneCounterExample(t, inFirefox)
}

// TestFirefoxTheCounterExampleWatchesAgainWhenTheGadgetLetsGoOfItsListener:
// in Firefox, a frame whose listener the stopped instance let go of
// watches again and goes on showing the other tab's changes.
func TestFirefoxTheCounterExampleWatchesAgainWhenTheGadgetLetsGoOfItsListener(t *testing.T) {
	theCounterExampleWatchesAgain(t, inFirefox)
}

// TestFirefoxTheNotesExampleAddsANoteAndFindsItBySearch: examples/notes in
// Firefox: typed notes are listed newest first, and search finds one.
func TestFirefoxTheNotesExampleAddsANoteAndFindsItBySearch(t *testing.T) {
	theNotesExampleAddsAndFinds(t, inFirefox)
}

// TestFirefoxTheNotesExampleEditsAndDeletesANote: in Firefox, Edit, Save
// and Delete work, and an invalid note gets the gadget's reason.
func TestFirefoxTheNotesExampleEditsAndDeletesANote(t *testing.T) {
	theNotesExampleEditsAndDeletes(t, inFirefox)
}

// TestFirefoxTheNotesExamplePagesThroughMoreNotesThanOnePage: in Firefox,
// Load more adds the notes past the first page.
func TestFirefoxTheNotesExamplePagesThroughMoreNotesThanOnePage(t *testing.T) {
	theNotesExamplePages(t, inFirefox)
}

// TestFirefoxTheScaffoldsUIGreetsInTheShell: in Firefox, a blueprint fresh
// from the scaffold, built, greets the user in the shell.
func TestFirefoxTheScaffoldsUIGreetsInTheShell(t *testing.T) {
	RequireFirefox(t) // before the work of building the blueprint
	theScaffoldsUIGreets(t, inFirefox)
}

// TestFirefoxWithoutTheProtectionsEveryProbeReachesTheNetwork is the
// control of the next test: in plain iframes the probes reach the witness.
func TestFirefoxWithoutTheProtectionsEveryProbeReachesTheNetwork(t *testing.T) {
	everyProbeReachesTheNetwork(t, inFirefox, probeGroups)
}

// TestFirefoxAGadgetFrameReachesNoNetwork: in Firefox, a gadget frame in
// the shell reaches neither another origin nor the shell's, by any channel
// the probes try: zero requests, zero connections, zero STUN packets.
func TestFirefoxAGadgetFrameReachesNoNetwork(t *testing.T) {
	framesReachNoNetwork(t, inFirefox, probeGroups)
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

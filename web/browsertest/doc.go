// Package browsertest runs gadgetd's browser tests in a real, headless
// Chromium: Debian's /usr/bin/chromium, never a downloaded browser, driven
// over the DevTools protocol by chromedp through a pipe (no debugging port,
// no chromedriver). The tests of the shell and the frame that matter most
// run in Firefox too: Debian's firefox-esr, driven over WebDriver BiDi, which
// it speaks natively, by a small client of this package's own (bidi.go,
// firefox.go; no geckodriver), on a loopback port it picks.
//
// Every test gets a browser of its own with a fresh profile directory, so no
// cookie, storage or cache leaks from one test into the next. NewTab and
// NewFirefoxTab start it and stop it when the test ends.
//
// Both browsers are part of what `make test` installs (scripts/deps.sh).
// Where one is missing, its tests skip and say how to install it, except in
// CI (CI=true), where a missing browser fails them: a browser test that
// quietly skips proves nothing.
//
// The tests themselves prove the browser half of the double sandbox: what a
// gadget's iframe cannot reach (isolation_test.go), with a control run
// without the protections for every channel, so that each test can fail.
// They also drive the shell end to end against a real server: one user's
// flows (shell_test.go), and two users sharing a gadget through the share
// dialog and links, each in a tab of their own (sharing_test.go).
package browsertest

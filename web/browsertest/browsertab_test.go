package browsertest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// A browserTab is a tab a test drives, in Chromium or in Firefox: what the
// tests that run in both browsers need of it.
type browserTab interface {
	// Navigate loads url and waits for its load event.
	Navigate(url string) error
	// Evaluate runs the expression js, awaits it if it is a promise, and
	// decodes its value, as JSON, into out (if not nil).
	Evaluate(js string, out any) error
	// Click clicks the left mouse button at (x, y) in the viewport, a real
	// input event.
	Click(x, y float64) error
	// AddPreloadScript has every document loaded in the tab from now on run
	// js before its own scripts.
	AddPreloadScript(js string) error
}

// chromium is a Chromium tab (from NewTab) as a browserTab.
type chromium struct{ tab context.Context }

func (c chromium) Navigate(url string) error { return chromedp.Do(c.tab, chromedp.Navigate(url)) }

func (c chromium) Evaluate(js string, out any) error {
	raw, err := chromedp.Run(c.tab, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

func (c chromium) Click(x, y float64) error { return chromedp.Do(c.tab, chromedp.MouseClickXY(x, y)) }

func (c chromium) AddPreloadScript(js string) error {
	return chromedp.Do(c.tab, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: js})
		return chromedp.Void{}, err
	})
}

// A browser is one the tests run in.
type browser struct {
	name   string
	newTab func(testing.TB) browserTab // a fresh browser's tab, ended with the test
}

var (
	inChromium = browser{"Chromium", func(t testing.TB) browserTab { return chromium{NewTab(t)} }}
	inFirefox  = browser{"Firefox", func(t testing.TB) browserTab { return NewFirefoxTab(t) }}
)

// waitIn waits until js is true in tab's page: a minute, a bound for a
// busy machine, not a speed the test asks for.
func waitIn(t testing.TB, tab browserTab, what, js string) {
	t.Helper()
	ok := waitUntil(time.Minute, func() bool {
		var v bool
		return tab.Evaluate("Boolean("+js+")", &v) == nil && v
	})
	if !ok {
		var text string
		tab.Evaluate(`document.body.innerText`, &text)
		t.Fatalf("waited a minute for %s (%s); the page says:\n%s", what, js, text)
	}
}

// clickIn clicks the open gadget's frame x pixels from its left edge, 20
// from its top, where the test UI has its buttons, with a real mouse
// event: the frame is another origin, which the page cannot script.
func clickIn(t testing.TB, tab browserTab, x float64) {
	t.Helper()
	var pos []float64
	if err := tab.Evaluate(`(() => { const r = document.querySelector(".frame-box iframe").getBoundingClientRect(); return [r.left, r.top]; })()`, &pos); err != nil {
		t.Fatal(err)
	}
	if err := tab.Click(pos[0]+x, pos[1]+20); err != nil {
		t.Fatal(err)
	}
}

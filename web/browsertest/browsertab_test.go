package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// chromium is a Chromium tab (from NewTab), or a frame's target in one,
// as a browserTab.
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

func (c chromium) Type(text string) error { return chromedp.Do(c.tab, chromedp.KeyEvent(text)) }

func (c chromium) AddPreloadScript(js string) error {
	return chromedp.Do(c.tab, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: js})
		return chromedp.Void{}, err
	})
}

// OpenTab's tab ends with its browser, at the end of the test.
func (c chromium) OpenTab() (browserTab, error) {
	other, _ := chromedp.NewContext(c.tab)
	return chromium{other}, chromedp.Do(other)
}

// GadgetFrame: Chromium runs the sandboxed frame in a process of its own,
// an "iframe" target, which the page's DOM tree does not reach; DevTools
// attaches to that target. The frame is detached from, not closed, when
// the test ends.
func (c chromium) GadgetFrame(replaced ...browserTab) (browserTab, error) {
	page := chromedp.FromContext(c.tab).Target.TargetID
	old := map[target.ID]bool{}
	for _, f := range replaced {
		old[chromedp.FromContext(f.(chromium).tab).Target.TargetID] = true
	}
	var id target.ID
	ok := waitUntil(time.Minute, func() bool {
		infos, err := chromedp.Targets(c.tab)
		for _, info := range infos {
			if err == nil && info.Type == "iframe" && info.ParentID == page && !old[info.TargetID] {
				id = info.TargetID
				return true
			}
		}
		return false
	})
	if !ok {
		return nil, errors.New("waited a minute for the gadget's frame to be a target of its own")
	}
	// The attachment lasts as long as this context, which ends with the
	// browser's.
	frame, _ := chromedp.NewContext(c.tab, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	return chromium{frame}, chromedp.Do(frame)
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
		err := tab.Evaluate(`document.body.innerText`, &text)
		t.Fatalf("waited a minute for %s (%s); the page says (%v):\n%s", what, js, err, text)
	}
}

// click clicks the element sel of tab's page, once it is shown and
// enabled, with a real mouse event at its middle.
func click(t testing.TB, tab browserTab, sel string) {
	t.Helper()
	waitIn(t, tab, sel+" shown and enabled", `((e) => e?.checkVisibility() && e.disabled !== true)(document.querySelector(`+jsString(sel)+`))`)
	var at []float64
	if err := tab.Evaluate(`(() => {
  const e = document.querySelector(`+jsString(sel)+`);
  e.scrollIntoView({block: "center"});
  const r = e.getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2];
})()`, &at); err != nil {
		t.Fatalf("finding %s: %v", sel, err)
	}
	if err := tab.Click(at[0], at[1]); err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
}

// typeInto clicks the element sel of tab's page and types text into it,
// key by key.
func typeInto(t testing.TB, tab browserTab, sel, text string) {
	t.Helper()
	click(t, tab, sel)
	if err := tab.Type(text); err != nil {
		t.Fatalf("typing into %s: %v", sel, err)
	}
}

// gadgetFrame is tab's open gadget's frame (see browserTab.GadgetFrame).
func gadgetFrame(t testing.TB, tab browserTab, replaced ...browserTab) browserTab {
	t.Helper()
	frame, err := tab.GadgetFrame(replaced...)
	if err != nil {
		t.Fatal(err)
	}
	return frame
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

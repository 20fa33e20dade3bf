package browsertest

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// BenchmarkCallFromTheFrame is the latency of a call from a gadget's UI to
// its gadget: Counter.get from inside the sandboxed frame, through the
// MessagePort, the shell's relay, /ws/frame and the server, and back. It
// reports the median (the frame's clock is coarsened to 100 µs).
func BenchmarkCallFromTheFrame(b *testing.B) {
	g := startGadgetd(b)
	tab := NewTab(b)
	loginAndCreateCounter(b, g, tab)
	b.ResetTimer()
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](`document.querySelector(".console").replaceChildren(); document.querySelector(".frame-box iframe").contentWindow.postMessage({bench: `+strconv.Itoa(b.N)+`}, "*")`)); err != nil {
		b.Fatal(err)
	}
	var p50 float64
	median := regexp.MustCompile(`bench p50 ([0-9.]+) us`)
	ok := waitUntil(10*time.Minute, func() bool {
		text, err := chromedp.Run(tab, chromedp.Evaluate[string](consoleText))
		if m := median.FindStringSubmatch(text); err == nil && m != nil {
			p50, _ = strconv.ParseFloat(m[1], 64)
			return true
		}
		return false
	})
	b.StopTimer()
	if !ok {
		b.Fatal("the frame never reported its calls")
	}
	b.ReportMetric(p50, "p50-µs")
}

package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestLogLinesBetweenANameAndItsResultsLoseNothing: a server's log lines
// that land between a benchmark's name and its results, or before the
// name's line ends, still leave every result with its benchmark. This
// broke the report of one run: it printed "not run" for three figures.
func TestLogLinesBetweenANameAndItsResultsLoseNothing(t *testing.T) {
	out := strings.Join([]string{
		"goos: linux",
		"BenchmarkFullStackCounterCall-2   \t     230\t   6422896 ns/op\t       155.7 calls/s\t      2028 p50-µs",
		"BenchmarkFullStackCounterGet-2    \ttime=2026-12-01T06:00:00Z level=WARN msg=\"connection aborted\" reason=\"1 2 3\"",
		"time=2026-12-01T06:00:01Z level=WARN msg=\"another\" n=7",
		"    1000\t    335000 ns/op\t       335.0 p50-µs\t       900.1 p99-µs",
		"BenchmarkBareEchoTCP-2",
		"2026/12/01 06:00:02 12 34 a log line with numbers",
		"   24514\t     58719 ns/op\t        26.98 p50-µs",
		"BenchmarkBareEchoTCP-2            \t   20000\t     60000 ns/op\t        28.00 p50-µs",
		"PASS",
	}, "\n")
	var p parser
	for _, line := range strings.Split(out, "\n") {
		p.line(line)
	}
	want := samples{
		"BenchmarkFullStackCounterCall": {"ns/op": {6422896}, "calls/s": {155.7}, "p50-µs": {2028}},
		"BenchmarkFullStackCounterGet":  {"ns/op": {335000}, "p50-µs": {335.0}, "p99-µs": {900.1}},
		"BenchmarkBareEchoTCP":          {"ns/op": {58719, 60000}, "p50-µs": {26.98, 28.00}},
	}
	if !reflect.DeepEqual(p.samples, want) {
		t.Errorf("parsed\n%v\nwant\n%v", p.samples, want)
	}
}

// TestALineOfOtherNumbersIsNotAResult: a log line made of numbers is not
// taken for a pending benchmark's results unless it has ns/op.
func TestALineOfOtherNumbersIsNotAResult(t *testing.T) {
	var p parser
	p.line("BenchmarkWarmCall-2  \t")
	p.line("12 34 ms 56 µs")
	if len(p.samples) != 0 {
		t.Errorf("took %v for results", p.samples)
	}
	p.line("  100  5000 ns/op  50.0 p50-µs")
	if got := p.samples["BenchmarkWarmCall"]["p50-µs"]; !reflect.DeepEqual(got, []float64{50}) {
		t.Errorf("p50 = %v, want [50]", got)
	}
}

// TestTargetsAreComputedFromTheSameRun: a target that names baselines is
// their medians in this run, and a missing baseline makes the row "?", not
// a pass.
func TestTargetsAreComputedFromTheSameRun(t *testing.T) {
	f := figure{name: "write p50", measured: metric{"W", "p50-µs"},
		terms: []term{{1, "commit", metric{"C", "p50-µs"}}, {3, "echo", metric{"E", "p50-µs"}}}}
	s := samples{
		"W": {"p50-µs": {700, 690, 710}},
		"C": {"p50-µs": {600, 500, 650}},
		"E": {"p50-µs": {30, 31, 29}},
	}
	var out strings.Builder
	report(&out, []figure{f}, s)
	if want := "≤ commit (600) + 3 × echo (30) = 690"; !strings.Contains(out.String(), want) {
		t.Errorf("report:\n%s\nwants %q", out.String(), want)
	}
	if !strings.Contains(out.String(), "700") || !strings.Contains(out.String(), "NO") {
		t.Errorf("report:\n%s\nwants the median 700, over its target", out.String())
	}
	delete(s, "C")
	out.Reset()
	report(&out, []figure{f}, s)
	if !strings.Contains(out.String(), "not run") || !strings.HasSuffix(strings.TrimSpace(out.String()), "?") {
		t.Errorf("report without a baseline:\n%s\nwants it named not run and the row unjudged", out.String())
	}
}

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// A metric is one unit a benchmark reports.
type metric struct{ bench, unit string }

// A term is coef × the median of a baseline measured in the same run.
type term struct {
	coef  float64
	label string // what the baseline is, for the report
	of    metric
}

// A figure is one line of the report: a measured median, and the target
// it must meet, if it has one: at most (or, if atLeast, at least) fixed
// plus the sum of the terms.
type figure struct {
	name     string
	measured metric
	atLeast  bool
	fixed    float64
	terms    []term
}

func (f figure) hasTarget() bool { return f.fixed != 0 || len(f.terms) > 0 }

var (
	echoP50      = metric{"BenchmarkBareEchoTCP", "p50-µs"}
	boltCommit   = metric{"BenchmarkBoltCommit", "p50-µs"}
	oneClient    = metric{"BenchmarkFullStackCounterCall", "calls/s"}
	echoInFlight = metric{"BenchmarkBareEcho64InFlight", "calls/s"}
)

// figures are the rows of the report, in the order of docs/BENCHMARKS.md.
var figures = []figure{
	{name: "full-stack read call (get) p50, µs", measured: metric{"BenchmarkFullStackCounterGet", "p50-µs"},
		terms: []term{{3, "bare echo p50", echoP50}}},
	{name: "full-stack write call (increment) p50, µs", measured: metric{"BenchmarkFullStackCounterCall", "p50-µs"},
		terms: []term{{1, "bare bbolt commit p50", boltCommit}, {3, "bare echo p50", echoP50}}},
	{name: "durable writes/s, 64 clients on 64 gadgets", measured: metric{"BenchmarkFullStackWrites64Gadgets", "calls/s"}, atLeast: true,
		terms: []term{{20, "one client's writes/s", oneClient}}},
	{name: "full-stack read calls/s, 64 in flight", measured: metric{"BenchmarkFullStackGets64InFlight", "calls/s"}, atLeast: true,
		terms: []term{{0.5, "bare echo calls/s, 64 in flight", echoInFlight}}},
	{name: "warm call into a gadget p50, µs", measured: metric{"BenchmarkWarmCall", "p50-µs"}, fixed: 50},
	{name: "guest → host call p50, µs", measured: metric{"BenchmarkGuestToHostCall", "p50-µs"}, fixed: 30},
	{name: "cold open of an idle gadget, instance pool warm, p50, µs", measured: metric{"BenchmarkColdOpenFromPool", "p50-µs"}, fixed: 1000},
	{name: "cold start without a pool (instantiate, init, open, call) p50, µs", measured: metric{"BenchmarkColdStart", "p50-µs"}},
	{name: "RSS per live idle Go-guest instance, MiB", measured: metric{"BenchmarkIdleInstanceRSS", "MiB/instance"}, fixed: 4},
	{name: "RSS per live idle WAT-guest instance, MiB", measured: metric{"BenchmarkIdleInstanceRSSWAT", "MiB/instance"}, fixed: 0.5},
	{name: "bare bbolt commit (one put, fsync) p50, µs", measured: boltCommit},
	{name: "store commits/s, 64 writers", measured: metric{"BenchmarkCommit64Writers", "commits/s"}},
	{name: "store commits/s, one writer", measured: metric{"BenchmarkCommitOneWriter", "commits/s"}},
	{name: "pipelined login-open-open-get, 20 ms each way, round trips", measured: metric{"BenchmarkPipelinedChain", "round-trips"}, fixed: 1.2},
	{name: "trapped instance to the next answer p50, µs", measured: metric{"BenchmarkTrapRecovery", "p50-µs"}},
	{name: "call p99 while ten compile bombs install, µs", measured: metric{"BenchmarkCallsWhileTenCompileBombsInstall", "p99-µs"}, fixed: 100_000},
	{name: "call from a gadget's frame to its gadget p50, µs (headless Chromium)", measured: metric{"BenchmarkCallFromTheFrame", "p50-µs"}},
}

// report writes one row per figure: its median, its target with the
// same-run values it was computed from, and whether it was met.
func report(w io.Writer, figures []figure, s samples) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tmeasured\ttarget (same-run baselines)\tmet")
	for _, f := range figures {
		vs := s[f.measured.bench][f.measured.unit]
		if len(vs) == 0 {
			fmt.Fprintf(tw, "%s\tnot run (no %s %s)\t%s\t\n", f.name, f.measured.bench, f.measured.unit, targetText(f, s))
			continue
		}
		m := median(vs)
		limit, ok := target(f, s)
		met := ""
		switch {
		case !f.hasTarget():
		case !ok:
			met = "?"
		case f.atLeast:
			met = yes(m >= limit)
		default:
			met = yes(m <= limit)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.name, num(m), targetText(f, s), met)
	}
	tw.Flush()
}

// target is f's limit, and false if a baseline it needs did not run.
func target(f figure, s samples) (float64, bool) {
	limit := f.fixed
	for _, t := range f.terms {
		vs := s[t.of.bench][t.of.unit]
		if len(vs) == 0 {
			return 0, false
		}
		limit += t.coef * median(vs)
	}
	return limit, true
}

func targetText(f figure, s samples) string {
	if !f.hasTarget() {
		return "(none)"
	}
	op := "≤"
	if f.atLeast {
		op = "≥"
	}
	var parts []string
	if f.fixed != 0 {
		parts = append(parts, num(f.fixed))
	}
	for _, t := range f.terms {
		v := "not run"
		if vs := s[t.of.bench][t.of.unit]; len(vs) > 0 {
			v = num(median(vs))
		}
		coef := ""
		if t.coef != 1 {
			coef = num(t.coef) + " × "
		}
		parts = append(parts, fmt.Sprintf("%s%s (%s)", coef, t.label, v))
	}
	text := op + " " + strings.Join(parts, " + ")
	if limit, ok := target(f, s); ok && len(f.terms) > 0 {
		text += " = " + num(limit)
	}
	return text
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// num prints a figure with three significant digits, or as an integer
// when it is large.
func num(v float64) string {
	if v >= 1000 || v <= -1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

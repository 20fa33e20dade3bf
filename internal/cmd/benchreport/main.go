// Command benchreport runs gadgetd's benchmarks and prints each figure that
// has a target (docs/BENCHMARKS.md) next to its target or baseline, in one run.
//
// The machine is noisy, so every benchmark runs -count times and the report
// quotes medians; latencies are compared as ratios against a baseline
// measured in the same run where the target is one.
//
//	go run ./internal/cmd/benchreport [-count 5] [-benchtime 1s]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// A figure is one line of the report.
type figure struct {
	name   string
	bench  string // benchmark name, without the -N suffix
	metric string // unit as reported by the benchmark
	// Exactly one of these: a fixed target, or a baseline benchmark whose
	// median the figure is divided by.
	max      float64
	baseline string
	maxRatio float64
}

var figures = []figure{
	{name: "full-stack call p50 / bare go-capnp echo p50", bench: "BenchmarkFullStackCounterCall", metric: "p50-µs", baseline: "BenchmarkBareEchoTCP", maxRatio: 2},
	{name: "pipelined login-open-open-get chain, 20 ms each way (round trips)", bench: "BenchmarkPipelinedChain", metric: "round-trips", max: 1.2},
	{name: "full-stack read-only call p50 / bare echo p50", bench: "BenchmarkFullStackCounterGet", metric: "p50-µs", baseline: "BenchmarkBareEchoTCP", maxRatio: 2},
	{name: "warm call into a gadget p50 (µs)", bench: "BenchmarkWarmCall", metric: "p50-µs", max: 60},
	{name: "guest-to-host call p50 (µs)", bench: "BenchmarkGuestToHostCall", metric: "p50-µs", max: 60},
	{name: "cold start p50 (µs)", bench: "BenchmarkColdStart", metric: "p50-µs", max: 5000},
	{name: "cold start p99 (µs)", bench: "BenchmarkColdStart", metric: "p99-µs"},
	{name: "trapped instance to next answer p50 (µs)", bench: "BenchmarkTrapRecovery", metric: "p50-µs"},
	{name: "idle live instance RSS (MiB, over 200)", bench: "BenchmarkIdleInstanceRSS", metric: "MiB/instance", max: 4.5},
	{name: "call p99 while ten compile bombs install (µs)", bench: "BenchmarkCallsWhileTenCompileBombsInstall", metric: "p99-µs", max: 100_000},
	{name: "call from a gadget's frame to its gadget p50 (µs, headless Chromium)", bench: "BenchmarkCallFromTheFrame", metric: "p50-µs"},
}

var packages = []string{"./wasmhost/", "./server/...", "./web/browsertest/"}

func main() {
	count := flag.Int("count", 5, "runs of each benchmark; the report quotes medians")
	benchtime := flag.String("benchtime", "1s", "go test -benchtime")
	flag.Parse()

	args := append([]string{"test", "-run", "^$", "-bench", ".", "-benchtime", *benchtime, "-count", strconv.Itoa(*count)}, packages...)
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "$ go %s\n", strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	samples := map[string]map[string][]float64{} // bench -> metric -> values
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		fmt.Println(line)
		parse(line, samples)
	}
	if err := cmd.Wait(); err != nil {
		fail(fmt.Errorf("benchmarks failed: %w", err))
	}
	report(samples, *count)
}

// parse reads one benchmark result line: name-N iterations value unit ...
func parse(line string, samples map[string]map[string][]float64) {
	fields := strings.Fields(line)
	if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
		return
	}
	name := fields[0]
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		name = name[:i]
	}
	for i := 2; i+1 < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			continue
		}
		if samples[name] == nil {
			samples[name] = map[string][]float64{}
		}
		samples[name][fields[i+1]] = append(samples[name][fields[i+1]], v)
	}
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func report(samples map[string]map[string][]float64, count int) {
	fmt.Printf("\nMedians of %d runs.\n\n", count)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "figure\tmeasured\tbaseline\tratio\ttarget\tmet")
	for _, f := range figures {
		vs := samples[f.bench][f.metric]
		if len(vs) == 0 {
			fmt.Fprintf(w, "%s\tnot run\t\t\t\t\n", f.name)
			continue
		}
		m := median(vs)
		switch {
		case f.baseline != "":
			bs := samples[f.baseline][f.metric]
			if len(bs) == 0 {
				fmt.Fprintf(w, "%s\t%.1f\tnot run\t\t≤ %.1f×\t\n", f.name, m, f.maxRatio)
				continue
			}
			b := median(bs)
			r := m / b
			fmt.Fprintf(w, "%s\t%.1f\t%.1f\t%.2f×\t≤ %.1f×\t%s\n", f.name, m, b, r, f.maxRatio, yes(r <= f.maxRatio))
		case f.max > 0:
			fmt.Fprintf(w, "%s\t%.2f\t\t\t≤ %g\t%s\n", f.name, m, f.max, yes(m <= f.max))
		default:
			fmt.Fprintf(w, "%s\t%.2f\t\t\t(none)\t\n", f.name, m)
		}
	}
	w.Flush()
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchreport:", err)
	os.Exit(1)
}

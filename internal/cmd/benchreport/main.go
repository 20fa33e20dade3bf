// Command benchreport runs gadgetd's benchmarks and prints each figure that
// has a target (docs/BENCHMARKS.md) next to its target, in one run.
//
// The machine is noisy, so every benchmark runs -count times and the report
// quotes medians. A target that depends on the machine (a bare go-capnp
// echo, a bare bbolt commit, one client's rate) is computed from baselines
// measured in the same run, and the report shows the sum it compared with.
//
//	go run ./internal/cmd/benchreport [-count 5] [-benchtime 1s]
//
// It exits 1 if a benchmark failed, after printing what did run.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// packages hold the benchmarks the figures name.
var packages = []string{"./internal/store/", "./wasmhost/", "./server/...", "./web/browsertest/"}

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
	var p parser
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20) // a long log line must not end the scan
	for sc.Scan() {
		fmt.Println(sc.Text())
		p.line(sc.Text())
	}
	if err := sc.Err(); err != nil {
		fail(err)
	}
	runErr := cmd.Wait()
	fmt.Printf("\nMedians of %d runs.\n\n", *count)
	report(os.Stdout, figures, p.samples)
	if runErr != nil {
		fail(fmt.Errorf("benchmarks failed (the figures above are what ran): %w", runErr))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchreport:", err)
	os.Exit(1)
}

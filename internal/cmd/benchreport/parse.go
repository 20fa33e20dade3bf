package main

import (
	"regexp"
	"strconv"
	"strings"
)

// samples holds every value a benchmark reported, by benchmark (without its
// -GOMAXPROCS suffix) and unit.
type samples map[string]map[string][]float64

func (s samples) add(bench, unit string, v float64) {
	if s[bench] == nil {
		s[bench] = map[string][]float64{}
	}
	s[bench][unit] = append(s[bench][unit], v)
}

// A parser reads `go test -bench` output line by line.
//
// testing prints a benchmark's name before running it and its results when
// it is done, on the same line. Whatever the code under test writes to
// stdout or stderr meanwhile (a server's log line, say) lands between the
// two, so the name and the results can arrive on different lines with
// other text glued to the name. The parser therefore remembers the last
// name it saw and gives it the next line that is nothing but results.
type parser struct {
	samples samples
	pending string // a benchmark whose name came without its results
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

func (p *parser) line(line string) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return
	}
	if strings.HasPrefix(fields[0], "Benchmark") {
		name := procsSuffix.ReplaceAllString(fields[0], "")
		if p.results(name, fields[1:]) {
			p.pending = ""
		} else {
			p.pending = name
		}
		return
	}
	if p.pending != "" && p.results(p.pending, fields) {
		p.pending = ""
	}
}

// results records fields as name's results if they are exactly that: an
// iteration count, then value-unit pairs, one of them ns/op.
func (p *parser) results(name string, fields []string) bool {
	if len(fields) < 3 || len(fields)%2 != 1 {
		return false
	}
	if _, err := strconv.ParseUint(fields[0], 10, 64); err != nil {
		return false
	}
	values := make([]float64, 0, len(fields)/2)
	sawNsPerOp := false
	for i := 1; i < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return false
		}
		values = append(values, v)
		sawNsPerOp = sawNsPerOp || fields[i+1] == "ns/op"
	}
	if !sawNsPerOp {
		return false
	}
	if p.samples == nil {
		p.samples = samples{}
	}
	for i, v := range values {
		p.samples.add(name, fields[2+2*i], v)
	}
	return true
}

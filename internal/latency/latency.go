// Package latency records per-operation durations in benchmarks and reports
// percentiles, because on a noisy machine a median says more than the mean
// that testing.B prints.
package latency

import (
	"slices"
	"testing"
	"time"
)

// Recorder collects durations. The zero value is ready to use; it is not
// safe for concurrent use.
type Recorder struct{ samples []time.Duration }

// Time runs f and records how long it took.
func (r *Recorder) Time(f func()) {
	start := time.Now()
	f()
	r.samples = append(r.samples, time.Since(start))
}

// Add records one duration.
func (r *Recorder) Add(d time.Duration) { r.samples = append(r.samples, d) }

// Percentile returns the p-th percentile (0 < p <= 100) of what was
// recorded, or 0 if nothing was.
func (r *Recorder) Percentile(p float64) time.Duration {
	if len(r.samples) == 0 {
		return 0
	}
	s := slices.Clone(r.samples)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Report adds p50 and p99, in microseconds, to b's results as "p50-µs" and
// "p99-µs".
func (r *Recorder) Report(b *testing.B) {
	b.ReportMetric(float64(r.Percentile(50).Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(r.Percentile(99).Nanoseconds())/1e3, "p99-µs")
}

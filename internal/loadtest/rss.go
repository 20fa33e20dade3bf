package loadtest

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// MiB is n bytes in MiB.
func MiB(n int64) float64 { return float64(n) / (1 << 20) }

// SamplePeak reads the server's RSS every interval until stop is called,
// and stop returns the largest it read.
func (s *Server) SamplePeak(interval time.Duration) (stop func() int64) {
	var peak atomic.Int64
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if n, err := s.RSS(); err == nil && n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-exited
		if n, err := s.RSS(); err == nil && n > peak.Load() {
			peak.Store(n)
		}
		return peak.Load()
	}
}

// RSSAfter reads the server's RSS at each of the times since, which must be
// in increasing order, and calls report with each reading as it is taken.
func (s *Server) RSSAfter(since time.Time, at []time.Duration, report func(after time.Duration, rss int64)) error {
	for _, d := range at {
		time.Sleep(time.Until(since.Add(d)))
		n, err := s.RSS()
		if err != nil {
			return err
		}
		report(d, n)
	}
	return nil
}

// ParseDurations parses a comma-separated list of increasing durations,
// "0s,30s,60s".
func ParseDurations(list string) ([]time.Duration, error) {
	var ds []time.Duration
	for _, s := range strings.Split(list, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		if len(ds) > 0 && d < ds[len(ds)-1] {
			return nil, fmt.Errorf("%q: the times must increase", list)
		}
		ds = append(ds, d)
	}
	return ds, nil
}

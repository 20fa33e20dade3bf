package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/internal/latency"
	"github.com/gadgetd/gadgetd/internal/store"
)

// The commit benchmarks write one small key per commit, each fsynced, to a
// file in b.TempDir(). BenchmarkBoltCommit is the same run's baseline: one
// bare bbolt Update per write, what a lone commit costs at best.

// reportCommits reports the commit rate and the latency percentiles.
func reportCommits(b *testing.B, elapsed time.Duration, lat *latency.Recorder) {
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
	lat.Report(b)
}

func BenchmarkBoltCommit(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	bucket := []byte("b")
	var lat latency.Recorder
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		lat.Time(func() {
			err = db.Update(func(tx *bolt.Tx) error {
				b, err := tx.CreateBucketIfNotExists(bucket)
				if err != nil {
					return err
				}
				return b.Put(fmt.Appendf(nil, "k%d", i), []byte("value"))
			})
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	reportCommits(b, time.Since(start), &lat)
}

func BenchmarkCommitOneWriter(b *testing.B) {
	s, err := store.Open(filepath.Join(b.TempDir(), "db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var lat latency.Recorder
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		lat.Time(func() { err = s.Commit(ctx, "g", put(fmt.Sprint("k", i), "value"), 1<<30) })
		if err != nil {
			b.Fatal(err)
		}
	}
	reportCommits(b, time.Since(start), &lat)
}

// BenchmarkCommit64Writers runs b.N commits from 64 goroutines, each on its
// own gadget, as 64 clients each calling their own gadget would.
func BenchmarkCommit64Writers(b *testing.B) {
	const writers = 64
	s, err := store.Open(filepath.Join(b.TempDir(), "db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var (
		next      atomic.Int64 // commits handed out
		wg        sync.WaitGroup
		latencies [writers][]time.Duration
	)
	b.ResetTimer()
	start := time.Now()
	for w := range writers {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				t := time.Now()
				if err := s.Commit(ctx, fmt.Sprint("g", w), put(fmt.Sprint("k", i), "value"), 1<<30); err != nil {
					b.Error(err)
					return
				}
				latencies[w] = append(latencies[w], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	var lat latency.Recorder
	for _, ds := range latencies {
		for _, d := range ds {
			lat.Add(d)
		}
	}
	reportCommits(b, elapsed, &lat)
}

package tokenbucket

import (
	"testing"
	"time"
)

// Time is passed in, so these tests use no clock.
func TestBucketAllowsItsBurstThenItsRate(t *testing.T) {
	start := time.Now()
	b := New(2, 3)
	b.filled = start
	for i := range 3 {
		if !b.Take(start) {
			t.Fatalf("event %d of the burst of 3 was refused", i+1)
		}
	}
	if b.Take(start) {
		t.Fatal("a 4th event at the same instant was allowed past a burst of 3")
	}
	if b.Take(start.Add(400 * time.Millisecond)) {
		t.Fatal("allowed after 0.4 s at 2 per second (0.8 tokens)")
	}
	if !b.Take(start.Add(500 * time.Millisecond)) {
		t.Fatal("refused after 0.5 s at 2 per second (1 token)")
	}
	later := start.Add(time.Hour)
	for i := range 3 {
		if !b.Take(later) {
			t.Fatalf("after an hour, event %d of 3 was refused", i+1)
		}
	}
	if b.Take(later) {
		t.Fatal("after an hour the bucket held more than its burst of 3")
	}
}

func TestZeroBucketAllowsNothing(t *testing.T) {
	var b Bucket
	if b.Take(time.Now()) {
		t.Fatal("the zero Bucket allowed an event")
	}
}

package loadtest_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/loadtest"
)

func TestParseDurationsTakesIncreasingTimesOnly(t *testing.T) {
	got, err := loadtest.ParseDurations("0s, 30s,1m")
	if want := []time.Duration{0, 30 * time.Second, time.Minute}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("ParseDurations(\"0s, 30s,1m\") = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"30s,0s", "soon", ""} {
		if _, err := loadtest.ParseDurations(bad); err == nil {
			t.Errorf("ParseDurations(%q) succeeded; want an error", bad)
		}
	}
}

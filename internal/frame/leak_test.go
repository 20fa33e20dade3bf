package frame_test

import (
	"testing"

	"github.com/gadgetd/gadgetd/internal/leakcheck"
)

// TestMain fails the run if the tests leak capabilities or goroutines.
func TestMain(m *testing.M) { leakcheck.Main(m) }

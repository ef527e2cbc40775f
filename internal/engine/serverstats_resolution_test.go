package engine

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds"
)

// A window's server time that the source printed too coarsely for its
// requests is said once on the point (a TF Serving whose latency sum has
// passed 10^9 µs moves in 10 ms steps: over 100 requests of 2 ms, ±100
// µs, 5% of the figure); a fine one says nothing.
func TestCoarseServerFigures(t *testing.T) {
	b := kinds.Counters{Success: kinds.Duration{Count: 1000, Ns: 1.23456e13, StepNs: 1e7}}
	a := kinds.Counters{Success: kinds.Duration{Count: 1100, Ns: 1.23456e13 + 2e8, StepNs: 1e7}}
	pr := &pointRunner{}
	pr.noteResolution(b, a, serverDelta(b, a))
	pr.noteResolution(b, a, serverDelta(b, a))
	if len(pr.notes) != 1 || !strings.Contains(pr.notes[0], "server figures are coarse") || !strings.Contains(pr.notes[0], "±100µs at 100 requests, 5%") {
		t.Fatalf("notes %q", pr.notes)
	}
	fine := &pointRunner{}
	a.Success.StepNs, b.Success.StepNs = 1e4, 1e4
	fine.noteResolution(b, a, serverDelta(b, a))
	if len(fine.notes) != 0 {
		t.Errorf("a fine sum noted: %q", fine.notes)
	}
}

package engine

import (
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

func ws(pairs ...float64) []result.Window {
	var out []result.Window
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, result.Window{Index: i / 2, Throughput: pairs[i], LatencyUs: pairs[i+1]})
	}
	return out
}

func TestStableTail(t *testing.T) {
	tests := []struct {
		name           string
		windows        []result.Window
		pct            float64
		throughputOnly bool
		want           bool
	}{
		{"fewer than three", ws(100, 10, 100, 10), 10, false, false},
		{"identical three", ws(100, 10, 100, 10, 100, 10), 10, false, true},
		{"exactly at 10 %", ws(100, 10, 110, 11, 105, 10.5), 10, false, true},
		{"throughput just over", ws(100, 10, 110.1, 10, 105, 10), 10, false, false},
		{"latency just over", ws(100, 10, 100, 11.01, 100, 10), 10, false, false},
		{"latency ignored when throughput only", ws(100, 10, 100, 20, 100, 10), 10, true, true},
		{"zero throughput never stable", ws(0, 0, 0, 0, 0, 0), 10, false, false},
		{"one zero window", ws(100, 10, 0, 0, 100, 10), 10, true, false},
		{"only the last three count", ws(1, 1, 500, 99, 100, 10, 101, 10, 99, 10), 10, false, true},
		{"unstable tail after stable start", ws(100, 10, 100, 10, 100, 10, 300, 10), 10, false, false},
		{"tighter threshold", ws(100, 10, 104, 10, 100, 10), 3, false, false},
		{"wider threshold", ws(100, 10, 140, 13, 100, 10), 50, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stableTail(tt.windows, tt.pct, tt.throughputOnly); got != tt.want {
				t.Errorf("stableTail = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsStableAsyncFallback(t *testing.T) {
	w := ws(100, 10, 101, 30, 100, 10) // throughput stable, latency not
	if st, _ := isStable(w, 10, false); st {
		t.Error("sync load accepted unstable latency")
	}
	st, latUnstable := isStable(w, 10, true)
	if !st || !latUnstable {
		t.Errorf("async fallback = (%v, %v), want (true, true)", st, latUnstable)
	}
	st, latUnstable = isStable(ws(100, 10, 100, 10, 100, 10), 10, true)
	if !st || latUnstable {
		t.Errorf("fully stable async = (%v, %v), want (true, false)", st, latUnstable)
	}
}

func TestKeepCount(t *testing.T) {
	for _, tt := range []struct{ trials, want int }{{0, 3}, {1, 3}, {3, 3}, {10, 10}} {
		if got := keepCount(tt.trials); got != tt.want {
			t.Errorf("keepCount(%d) = %d, want %d", tt.trials, got, tt.want)
		}
	}
}

// Problem 4 of the verdict-integrity issue: windows replayed one at a time
// through the rule that measures a point on its own. Points whose later
// kept windows leave the band were once called stable because the first
// three agreed; every kept trial must lie within ±stability now.
func TestKeptRuleCoversEveryKeptTrial(t *testing.T) {
	tput := func(vs ...float64) []result.Window {
		out := make([]result.Window, len(vs))
		for i, v := range vs {
			out[i] = result.Window{Index: i, Throughput: v, LatencyUs: 1000}
		}
		return out
	}
	m := plan.Measurement{StabilityPct: 10, MaxTrials: 6, Trials: 5}
	tests := []struct {
		name     string
		windows  []result.Window
		stableAt int // -1: never stable
		measured int // windows measured before the rule stopped
	}{
		{"first three agree, the next two do not", tput(496, 456, 495, 867, 888, 870, 850, 700), -1, 8},
		{"wild from the start", tput(6032, 7392, 5984, 2992, 1040, 5000, 6000, 4000), -1, 8},
		{"all five within the band", tput(500, 510, 495, 505, 500), 0, 5},
		{"settles after a slow start", tput(300, 450, 500, 510, 495, 505, 500), 2, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newKeptRule(m, true, false)
			at, measured := -1, 0
			for i := range tt.windows {
				measured = i + 1
				var more bool
				at, more, _ = r.decide(tt.windows[:i+1])
				if at >= 0 || !more {
					break
				}
			}
			if at != tt.stableAt || measured != tt.measured {
				t.Errorf("stable at %d after %d windows, want %d after %d", at, measured, tt.stableAt, tt.measured)
			}
		})
	}
	// Interleaved points take their trials later in rounds: for them the
	// rule is perf_analyzer's three windows.
	r := newKeptRule(m, false, false)
	if at, more, _ := r.decide(tput(496, 456, 495)); at != 0 || more {
		t.Errorf("interleaved: stable at %d (more %v), want 0", at, more)
	}
}

// stableTail applies perf_analyzer's rule to the last stabilityWindow windows
// of ws: none has zero throughput, max/min throughput ≤ 1+pct/100 and, unless
// throughputOnly, max/min stabilizing latency ≤ 1+pct/100.
func stableTail(ws []result.Window, pct float64, throughputOnly bool) bool {
	if len(ws) < stabilityWindow {
		return false
	}
	return stableAll(ws[len(ws)-stabilityWindow:], pct, throughputOnly)
}

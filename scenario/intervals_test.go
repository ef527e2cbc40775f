package scenario

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// load.request_intervals replays a schedule file at its mean rate; what
// else would set the rate, or a mode without a schedule, is refused at its
// key, and a bad file at its line.
func TestRequestIntervals(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"iv.txt": "1000\n3000\n", "bad.txt": "1000\nfast\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const head = "version: 1\nserver: {url: h:8000}\nmodels: [{name: m}]\n"
	tests := []struct {
		load string
		err  string // "" loads
	}{
		{"load: {request_intervals: iv.txt}", ""},
		{"load: {mode: request_rate, request_intervals: iv.txt, max_threads: 2}", ""},
		{"load: {mode: concurrency, request_intervals: iv.txt}", "load.request_intervals: applies only with mode: request_rate"},
		{"load: {request_intervals: iv.txt, request_rate: 10}", "load.request_rate: does not apply with load.request_intervals"},
		{"load: {request_intervals: iv.txt, distribution: poisson}", "load.distribution: does not apply with load.request_intervals"},
		{"load: {request_intervals: iv.txt}\nsweep: {request_rate: [1, 2]}", "sweep.request_rate: does not apply with load.request_intervals"},
		{"load: {request_intervals: bad.txt}", `bad.txt:2: "fast" is not an interval in whole microseconds`},
		{"load: {request_intervals: none.txt}", "none.txt: no such file"},
	}
	for _, tc := range tests {
		s, err := Parse(filepath.Join(dir, "s.yaml"), []byte(head+tc.load+"\n"), nil)
		var p *plan.Plan
		if err == nil {
			p, err = Expand(s)
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.load, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.load, err)
			continue
		}
		l := p.Points[0].Load
		if len(p.Points) != 1 || l.Mode != plan.LoadRequestRate || l.Distribution != plan.Intervals || l.Rate != 500 ||
			!slices.Equal(l.Intervals, []time.Duration{time.Millisecond, 3 * time.Millisecond}) || p.Points[0].ID != "m/r=500" {
			t.Errorf("%s: %+v %s", tc.load, l, p.Points[0].ID)
		}
	}
}

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

// Any file either reads as a schedule that can be replayed (one interval
// a non-blank line, none negative, some time in all) or fails naming it.
func FuzzParseIntervals(f *testing.F) {
	for _, s := range []string{"1000\n2000\n", "0\n0\n", "", " 5 \n\n7", "1e3", "-1", "3600000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		iv, err := ParseIntervals("f.txt", []byte(src))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.txt") {
				t.Errorf("%q: error %q does not name the file", src, err)
			}
			return
		}
		lines := 0
		for _, l := range strings.Split(src, "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		var total time.Duration
		for _, d := range iv {
			if d < 0 {
				t.Errorf("%q: negative interval %v", src, d)
			}
			total += d
		}
		if len(iv) != lines || total <= 0 || IntervalsRate(iv) <= 0 {
			t.Errorf("%q: %d intervals for %d lines, total %v", src, len(iv), lines, total)
		}
	})
}

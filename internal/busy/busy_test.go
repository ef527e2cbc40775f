package busy

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/result"
)

// dist is a window's disturbance: others (share of all CPUs), load, wait
// (< 0: not recorded) and wake-up p99 in µs (< 0: not recorded).
func dist(others, load, wait, p99 float64) *result.Disturbance {
	d := &result.Disturbance{OtherCPU: others, Load1: load}
	if wait >= 0 {
		d.RunQueueWait = &wait
	}
	if p99 >= 0 {
		qs := make([]float64, len(result.WakeupQuantiles))
		for i := range qs {
			qs[i] = p99 / 4
		}
		qs[wakeP99] = p99
		d.WakeupDelay = &result.WakeupDelay{Mean: p99 / 10, Quantiles: qs, N: 250}
	}
	return d
}

func summary(t *testing.T, ds ...*result.Disturbance) Summary {
	t.Helper()
	s, ok := Of(ds)
	if !ok {
		t.Fatal("no summary")
	}
	return s
}

func TestTooBusy(t *testing.T) {
	tests := []struct {
		name string
		d    *result.Disturbance
		cpus int
		want bool
	}{
		{"quiet", dist(0.02, 0.4, 0.03, 40), 2, false},
		{"the reviewed runner: load 15, others 93%", dist(0.93, 15.2, 0.9, 4100), 2, true},
		{"a one-core hog on two cores", dist(0.5, 1.2, 0.1, 60), 2, true},
		{"others 49%, nothing waits", dist(0.49, 1.0, 0.1, 60), 2, false},
		{"others 30%, load 2 per CPU", dist(0.3, 4.0, 0.1, 60), 2, true},
		{"others 30%, load 2 per CPU, CPUs unknown", dist(0.3, 4.0, 0.1, 60), 0, false},
		{"others 30%, perfscen waits half its run time", dist(0.3, 1.0, 0.5, 60), 2, true},
		{"others 30%, wake-up p99 1 ms", dist(0.3, 1.0, 0.1, 1000), 2, true},
		{"others 30%, wake-up p99 900 µs", dist(0.3, 1.0, 0.1, 900), 2, false},
		// perfscen's own threads queue behind each other at a high
		// load level: waits without other work are not a busy machine.
		{"others 10%, everything waits", dist(0.1, 12, 3, 8000), 2, false},
		{"others 30%, no wait or probe recorded", dist(0.3, 1.0, -1, -1), 2, false},
		{"steal counts as others", &result.Disturbance{OtherCPU: 0.3, Steal: 0.25}, 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := summary(t, tc.d).TooBusy(tc.cpus); got != tc.want {
				t.Errorf("TooBusy = %v, want %v", got, tc.want)
			}
		})
	}
}

// The summary is the median over the windows: one busy window among quiet
// ones does not make the machine too busy.
func TestOfIsTheMedian(t *testing.T) {
	quiet, loud := dist(0.02, 0.4, 0.03, 40), dist(0.95, 16, 1, 5000)
	if s := summary(t, quiet, loud, quiet, nil); s.TooBusy(2) || s.Windows != 3 {
		t.Errorf("one loud window of three: %+v", s)
	}
	if s := summary(t, loud, quiet, loud); !s.TooBusy(2) {
		t.Errorf("two loud windows of three: %+v", s)
	}
	if _, ok := Of([]*result.Disturbance{nil, nil}); ok {
		t.Error("no disturbance recorded, yet a summary")
	}
}

func TestAbove(t *testing.T) {
	ref := dist(0.05, 1, 0.1, 100)
	tests := []struct {
		name string
		now  *result.Disturbance
		cpus int
		want string // "" not above
	}{
		{"the same", dist(0.05, 1, 0.1, 100), 2, ""},
		{"others a quarter of a core more", dist(0.175, 1, 0.1, 100), 2, "other processes used 18% of the CPUs against 5%"},
		{"others a little more", dist(0.15, 1, 0.1, 100), 2, ""},
		{"others on 64 CPUs: at least 2 points", dist(0.07, 1, 0.1, 100), 64, "other processes used 7% of the CPUs against 5%"},
		{"run-queue wait 1.5× plus 10 points", dist(0.05, 1, 0.25, 100), 2, "perfscen's run-queue wait 25% of its run time against 10%"},
		{"run-queue wait a little more", dist(0.05, 1, 0.24, 100), 2, ""},
		{"wake-up p99 twice plus 0.5 ms", dist(0.05, 1, 0.1, 700), 2, "wake-up delay p99 700µs against 100µs"},
		{"wake-up p99 a little more", dist(0.05, 1, 0.1, 690), 2, ""},
		// The load average lags a minute and counts perfscen's own
		// threads: it decides nothing here.
		{"load alone", dist(0.05, 12, 0.1, 100), 2, ""},
		{"wait not recorded now", dist(0.05, 1, -1, 100), 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := summary(t, tc.now).Above(summary(t, ref), tc.cpus)
			if ok != (tc.want != "") || got != tc.want {
				t.Errorf("Above = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}

func TestUnsettled(t *testing.T) {
	point := func(status string, ds ...*result.Disturbance) *result.Point {
		p := &result.Point{ID: "m/c=2", Status: status}
		for i, d := range ds {
			p.Windows = append(p.Windows, result.Window{Index: i, Disturbance: d})
		}
		return p
	}
	loud := dist(0.93, 15.2, 0.8, 4100)
	s, ok := Unsettled(point(result.PointUnstable, loud, loud, dist(0.9, 14, 0.7, 3000)), 2)
	msg := NotSettled("m/c=2", s, 2)
	want := "could not measure: the machine was too busy for point m/c=2 to settle in 3 window(s) (load average 15.2 on 2 CPUs, " +
		"other processes used 93% of the CPUs, wake-up delay p99 4.10ms, perfscen's threads waited for a CPU 80% as long as they ran); " +
		"gate with a same-job A/B comparison instead"
	if !ok || !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, "or record on a quieter runner") {
		t.Errorf("too busy: %v %q", ok, msg)
	}
	if rec := NotRecorded("m/c=2", s, 2); !strings.HasPrefix(rec, "could not record: the machine was too busy for point m/c=2 to settle") {
		t.Errorf("not recorded: %q", rec)
	}
	for name, p := range map[string]*result.Point{
		"unstable on a quiet machine": point(result.PointUnstable, dist(0.02, 0.4, 0.03, 40)),
		"stable on a busy machine":    point(result.PointStable, loud),
		"nothing recorded":            point(result.PointUnstable),
	} {
		if s, ok := Unsettled(p, 2); ok {
			t.Errorf("%s: %+v", name, s)
		}
	}
}

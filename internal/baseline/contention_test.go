package baseline

import (
	"reflect"
	"testing"

	"github.com/perfscen/perfscen/runner/result"
)

func TestMaxContention(t *testing.T) {
	d := func(other float64, wait, press *float64) *result.Disturbance {
		return &result.Disturbance{OtherCPU: other, RunQueueWait: wait, CPUPressure: press}
	}
	// wd: a trial with other processes at 10% and wake-up delays of
	// mean m and quantiles k, 2k, … 9k.
	wd := func(m, k float64) *result.Disturbance {
		w := &result.WakeupDelay{Mean: m, N: 500}
		for i := 1; i <= 9; i++ {
			w.Quantiles = append(w.Quantiles, k*float64(i))
		}
		return &result.Disturbance{OtherCPU: 0.1, WakeupDelay: w}
	}
	run := func(ds ...*result.Disturbance) Run {
		p := &Point{Model: "m"}
		for _, x := range ds {
			p.Trials = append(p.Trials, Trial{Disturbance: x})
		}
		return Run{Points: map[string]*Point{"m/c=1": p}}
	}
	tests := []struct {
		name string
		runs []Run
		want Contention
		n    int
	}{
		{"medians, then the most of them", []Run{
			run(d(0.1, new(0.2), new(0.3)), d(0.3, new(0.4), new(0.5)), d(0.2, new(0.3), new(0.4))),
			run(d(0.5, new(0.1), new(0.1))),
		}, Contention{OtherCPU: 0.5, HaveOtherCPU: true, Wait: 0.3, HaveWait: true, Pressure: 0.4, HavePressure: true}, 2},
		{"a run without wait or pressure: those signals are unknown", []Run{
			run(d(0.1, new(0.2), new(0.3))),
			run(d(0.2, nil, nil)),
		}, Contention{OtherCPU: 0.2, HaveOtherCPU: true, Wait: 0.2, Pressure: 0.3}, 2},
		{"a run from before the sentinel", []Run{
			run(d(0.1, new(0.2), new(0.3))),
			run(nil, nil),
		}, Contention{OtherCPU: 0.1, Wait: 0.2, Pressure: 0.3}, 2},
		{"wake-up delays: medians per quantile, then the most of each", []Run{
			run(wd(10, 1), wd(30, 3), wd(20, 2)),
			run(wd(5, 4)),
		}, Contention{OtherCPU: 0.1, HaveOtherCPU: true, HaveWake: true,
			Wake: result.WakeupDelay{Mean: 20, Quantiles: []float64{4, 8, 12, 16, 20, 24, 28, 32, 36}}}, 2},
		{"a run without the probe: wake-up delays unknown", []Run{
			run(wd(10, 1)),
			run(d(0.1, nil, nil)),
		}, Contention{OtherCPU: 0.1, HaveOtherCPU: true}, 2},
		{"no history of the point", nil, Contention{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &Testbed{Runs: tt.runs}
			got, n := tb.MaxContention("m/c=1")
			if !reflect.DeepEqual(got, tt.want) || n != tt.n {
				t.Errorf("MaxContention = %+v, %d; want %+v, %d", got, n, tt.want, tt.n)
			}
		})
	}
}

package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/perfscen/perfscen/runner/result"
)

func fp(v float64) *float64 { return &v }

// The kept windows' figures merge weighted by their inferences, and a
// figure one window lacks is left out of the merge rather than averaged
// over the windows that have it.
func TestMergeProcess(t *testing.T) {
	full := func(inf int64, cpu, runq, pre, instr, work float64, threads int) *result.ProcessStats {
		return &result.ProcessStats{CPUUs: cpu, RunQueueUs: fp(runq), PreemptUs: fp(pre),
			Instructions: fp(instr), Work: fp(work), Inferences: inf, Threads: threads}
	}
	for _, tt := range []struct {
		name string
		in   []*result.ProcessStats
		want *result.ProcessStats
	}{
		{"none", nil, nil},
		{"only nil windows", []*result.ProcessStats{nil, nil}, nil},
		{"no inferences", []*result.ProcessStats{{CPUUs: 5}}, nil},
		{"one window", []*result.ProcessStats{full(10, 100, 20, 5, 1e6, 3, 4)},
			full(10, 100, 20, 5, 1e6, 3, 4)},
		{"weighted by inferences, nil windows skipped",
			[]*result.ProcessStats{full(10, 100, 20, 4, 1e6, 2, 4), nil, full(30, 200, 40, 8, 3e6, 6, 6)},
			full(40, 175, 35, 7, 2.5e6, 5, 6)},
		{"a figure one window lacks is left out",
			[]*result.ProcessStats{
				full(10, 100, 20, 4, 1e6, 2, 4),
				{CPUUs: 200, RunQueueUs: fp(40), Work: fp(6), Inferences: 30, Threads: 2},
			},
			&result.ProcessStats{CPUUs: 175, RunQueueUs: fp(35), Work: fp(5), Inferences: 40, Threads: 4}},
		{"the split by CPU merges like the rest; work by CPU only where every window had it",
			[]*result.ProcessStats{
				{CPUUs: 100, Work: fp(2), WorkByCPU: true, CPUUsByCPU: []float64{100}, Inferences: 10},
				{CPUUs: 200, Work: fp(6), CPUUsByCPU: []float64{0, 200}, Inferences: 30},
			},
			&result.ProcessStats{CPUUs: 175, Work: fp(5), CPUUsByCPU: []float64{25, 150}, Inferences: 40}},
		{"a window without the split leaves it out",
			[]*result.ProcessStats{
				{CPUUs: 100, Work: fp(2), WorkByCPU: true, CPUUsByCPU: []float64{100}, Inferences: 10},
				{CPUUs: 200, Work: fp(6), WorkByCPU: true, Inferences: 30},
			},
			&result.ProcessStats{CPUUs: 175, Work: fp(5), WorkByCPU: true, Inferences: 40}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mergeProcess(tt.in)); diff != "" {
				t.Errorf("mergeProcess (-want +got):\n%s", diff)
			}
		})
	}
}

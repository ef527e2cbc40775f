package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/result"
)

func stats(success, queue, infer, ic, ec uint64) kinds.Counters {
	return kinds.Counters{
		Inferences: ic, Executions: ec,
		Success:       kinds.Duration{Count: success, Ns: success * 1000_000},
		Queue:         kinds.Duration{Count: success, Ns: queue},
		ComputeInput:  kinds.Duration{Count: success, Ns: success * 10_000},
		ComputeInfer:  kinds.Duration{Count: success, Ns: infer},
		ComputeOutput: kinds.Duration{Count: success, Ns: success * 5_000},
	}
}

func TestServerDelta(t *testing.T) {
	tests := []struct {
		name          string
		before, after kinds.Counters
		want          *result.ServerStats
	}{
		{
			name:   "plain delta",
			before: stats(100, 1_000_000, 50_000_000, 400, 100),
			after:  stats(300, 5_000_000, 250_000_000, 1200, 150),
			want: &result.ServerStats{RequestCount: 200, InferenceCount: 800, ExecutionCount: 50,
				AvgRequestUs: 1000, QueueUs: 20, ComputeInputUs: 10, ComputeInferUs: 1000, ComputeOutputUs: 5},
		},
		{
			name:   "no traffic",
			before: stats(100, 1, 1, 1, 1),
			after:  stats(100, 1, 1, 1, 1),
			want:   &result.ServerStats{},
		},
		{
			name:   "restart: counters went backwards",
			before: stats(1000, 1_000_000, 50_000_000, 4000, 1000),
			after:  stats(10, 10_000, 500_000, 40, 10),
			want:   &result.ServerStats{Reset: true},
		},
		{
			name:   "restart seen in one counter only",
			before: stats(100, 9_000_000, 50_000_000, 400, 100),
			after:  stats(300, 5_000_000, 250_000_000, 1200, 150),
			want:   &result.ServerStats{Reset: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, serverDelta(tt.before, tt.after)); diff != "" {
				t.Errorf("serverDelta (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeServer(t *testing.T) {
	got := mergeServer([]*result.ServerStats{
		{RequestCount: 100, QueueUs: 10, AvgRequestUs: 100, InferenceCount: 100, ExecutionCount: 50},
		{RequestCount: 300, QueueUs: 30, AvgRequestUs: 200, InferenceCount: 300, ExecutionCount: 100},
	})
	want := &result.ServerStats{RequestCount: 400, QueueUs: 25, AvgRequestUs: 175, InferenceCount: 400, ExecutionCount: 150}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merge (-want +got):\n%s", diff)
	}
	if got := mergeServer([]*result.ServerStats{{RequestCount: 1}, {Reset: true}}); !got.Reset {
		t.Error("reset did not taint the merge")
	}
	if mergeServer([]*result.ServerStats{nil, nil}) != nil {
		t.Error("merge of no stats is not nil")
	}
}

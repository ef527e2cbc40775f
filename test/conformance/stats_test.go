package conformance

import (
	"testing"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
)

// Statistics deltas must equal what was sent, and the three compute counts
// must stay equal (perf_analyzer rejects them otherwise). A request Triton
// rejects during normalization (batch over max_batch_size) records no
// failure; one that fails in execution (an injected fault) does.
func TestStatisticsDeltas(t *testing.T) {
	for _, k := range transports {
		t.Run(k.String(), func(t *testing.T) {
			s := start(t, refserver.Options{Models: []string{"identity_fp32"}})
			c, infer := connect(t, s, k)
			ctx := ctxT(t)
			get := func() kservev2.ModelStats {
				st, err := c.ModelStatistics(ctx, "identity_fp32", "1")
				if err != nil || len(st) != 1 {
					t.Fatalf("statistics %+v %v", st, err)
				}
				return st[0]
			}
			before := get()
			const n, batch = 7, 3
			for range n {
				_, err := infer(ctx, &client.InferRequest{Model: "identity_fp32", Inputs: []client.Input{
					input("INPUT0", tensor.FP32, []int64{batch, 4}, make([]byte, batch*16))}})
				if err != nil {
					t.Fatal(err)
				}
			}
			_, err := infer(ctx, &client.InferRequest{Model: "identity_fp32", Inputs: []client.Input{
				input("INPUT0", tensor.FP32, []int64{9, 1}, make([]byte, 36))}})
			if err == nil {
				t.Fatal("batch 9 accepted by a max_batch_size 8 model")
			}
			after := get()
			d := func(a, b kservev2.StatDuration) kservev2.StatDuration { return a.Sub(b) }
			ai, bi := after.InferenceStats, before.InferenceStats
			for name, got := range map[string]uint64{
				"success": d(ai.Success, bi.Success).Count, "queue": d(ai.Queue, bi.Queue).Count,
				"compute_input": d(ai.ComputeInput, bi.ComputeInput).Count, "compute_infer": d(ai.ComputeInfer, bi.ComputeInfer).Count,
				"compute_output": d(ai.ComputeOutput, bi.ComputeOutput).Count,
			} {
				if got != n {
					t.Errorf("%s count delta %d, want %d", name, got, n)
				}
			}
			if f := d(ai.Fail, bi.Fail).Count; f != 0 {
				t.Errorf("fail delta %d after a rejected batch-9 request, want 0", f)
			}
			if got := after.InferenceCount - before.InferenceCount; got != n*batch {
				t.Errorf("inference_count delta %d, want %d", got, n*batch)
			}
			if got := after.ExecutionCount - before.ExecutionCount; got != n {
				t.Errorf("execution_count delta %d, want %d", got, n)
			}
			if len(after.BatchStats) != 1 || after.BatchStats[0].BatchSize != batch || after.BatchStats[0].ComputeInfer.Count != n {
				t.Errorf("batch_stats %+v", after.BatchStats)
			}
			if err := s.SetModelParameter("identity_fp32", "error_rate", "1"); err != nil {
				t.Fatal(err)
			}
			if _, err := infer(ctx, &client.InferRequest{Model: "identity_fp32", Inputs: []client.Input{
				input("INPUT0", tensor.FP32, []int64{1, 4}, make([]byte, 16))}}); err == nil {
				t.Fatal("injected fault answered")
			}
			if f := d(get().InferenceStats.Fail, ai.Fail).Count; f != 1 {
				t.Errorf("fail delta %d after an injected execution fault, want 1", f)
			}
		})
	}
}

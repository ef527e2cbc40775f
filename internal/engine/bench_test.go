package engine

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
)

// instantClient answers every request at once with a shared response, so
// a benchmark measures only the runner's own cost per request.
type instantClient struct {
	client.Client
	resp client.InferResponse
}

func (c *instantClient) Infer(context.Context, *client.InferRequest) (*client.InferResponse, error) {
	return &c.resp, nil
}

// runnerAllocBudget is the engine's allocations per request (worker, batch
// hand-off, aggregator, histogram): none, with room for the session's setup
// spread over the run.
const runnerAllocBudget = 0.01

// BenchmarkRunnerOverhead reports the engine's cost per request (one op is
// one request): worker, cursor, sample through the channel, aggregator and
// histogram, without validation.
func BenchmarkRunnerOverhead(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run("workers="+itoa(workers), func(b *testing.B) {
			d := simpleData(1, 4)
			offs, _ := flatOffsets(d)
			pl := &pointLoad{client: &instantClient{}, model: "simple", data: d, offsets: offs,
				seqIDs: new(atomic.Uint64), validateEvery: 1}
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			w, _, err := startSession(context.Background(), pl,
				loadSpec{workers: workers, budget: int64(b.N), whole: true}).wait()
			b.StopTimer()
			runtime.ReadMemStats(&after)
			if err != nil || w == nil || w.n != int64(b.N) {
				b.Fatalf("measured %v requests, err %v", w, err)
			}
			// The session's setup (histograms, goroutines, batches) is a
			// few hundred allocations; per request the engine allocates
			// nothing, which only a long run can tell apart.
			perReq := float64(after.Mallocs-before.Mallocs) / float64(b.N)
			b.ReportMetric(perReq, "allocs/req")
			if b.N >= 100000 && perReq > runnerAllocBudget {
				b.Fatalf("%.4f allocations per request, budget %v: the engine allocates per request", perReq, runnerAllocBudget)
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}

package engine

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
)

// instantPoint answers every request at once, so a benchmark measures
// only the engine's own cost per request.
type instantPoint struct{ d *inputdata.Data }

func (p instantPoint) Data() *inputdata.Data { return p.d }
func (instantPoint) NewCaller(context.Context, int) (kinds.Caller, error) {
	return instantCaller{}, nil
}
func (instantPoint) Stats(context.Context) (kinds.Counters, error) {
	return kinds.Counters{}, kinds.ErrNoStats
}
func (instantPoint) Close() error { return nil }

type instantCaller struct{}

func (instantCaller) Call(_ context.Context, clock func() time.Duration, _ *kinds.Request, out *kinds.Outcome) {
	out.Sent = clock()
	out.Done = out.Sent
}
func (instantCaller) Close() error { return nil }

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
			pl := &pointLoad{kind: instantPoint{d}, data: d, offsets: offs,
				seqIDs: new(atomic.Uint64), validateEvery: 1}
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			w, _, err := startSession(context.Background(), pl,
				loadSpec{workers: workers, budget: int64(b.N), whole: true}, time.Now()).wait()
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

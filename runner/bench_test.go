package runner

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/perfscen/perfscen/internal/client"
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
			b.ResetTimer()
			w, _, err := startSession(context.Background(), pl,
				loadSpec{workers: workers, budget: int64(b.N), whole: true}).wait()
			b.StopTimer()
			if err != nil || w == nil || w.n != int64(b.N) {
				b.Fatalf("measured %v requests, err %v", w, err)
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

package verdict

import (
	"math/rand/v2"
	"testing"

	"github.com/perfscen/perfscen/internal/baseline"
)

// resampledMedian must agree with sorting the drawn values.
func TestResampledMedian(t *testing.T) {
	for _, n := range []int{1, 2, 3, 10, 11} {
		sorted := make([]float64, n)
		for i := range sorted {
			sorted[i] = float64(i * i)
		}
		counts := make([]int, n)
		for rep := 0; rep < 200; rep++ {
			r1 := rand.New(rand.NewPCG(uint64(rep), 1))
			r2 := rand.New(rand.NewPCG(uint64(rep), 1))
			got := resampledMedian(sorted, counts, r1)
			draw := make([]float64, n)
			for i := range draw {
				draw[i] = sorted[r2.IntN(n)]
			}
			if want := baseline.Median(draw); got != want {
				t.Fatalf("n=%d rep=%d: got %g, want %g", n, rep, got, want)
			}
		}
	}
}

func BenchmarkBootstrapRatio(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	a, c := noisy(rng, 10, 1000, 1, 0.02).tp, noisy(rng, 10, 1000, 1, 0.02).tp
	for b.Loop() {
		bootstrapRatio(a, c, DefaultResamples, CIConfidence, rng)
	}
}

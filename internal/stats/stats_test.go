package stats

import (
	"math/rand/v2"
	"testing"
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
			if want := Median(draw); got != want {
				t.Fatalf("n=%d rep=%d: got %g, want %g", n, rep, got, want)
			}
		}
	}
}

func BenchmarkBootstrapRatio(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	a, c := make([]float64, 10), make([]float64, 10)
	for i := range a {
		a[i], c[i] = 1000*(1+0.02*rng.NormFloat64()), 1000*(1+0.02*rng.NormFloat64())
	}
	for b.Loop() {
		BootstrapRatio(a, c, 2000, 0.95, rng)
	}
}

func TestHolm(t *testing.T) {
	tests := []struct {
		p, alpha []float64
		want     []bool
	}{
		{[]float64{0.001, 0.004, 0.03}, []float64{0.01, 0.01, 0.01}, []bool{true, true, false}},
		{[]float64{0.004, 0.004, 0.004}, []float64{0.01, 0.01, 0.01}, []bool{false, false, false}},
		{[]float64{0.02, 0.001}, []float64{0.05, 0.01}, []bool{true, true}},
		{nil, nil, []bool{}},
	}
	for _, tt := range tests {
		got := Holm(tt.p, tt.alpha)
		for i := range tt.want {
			if got[i] != tt.want[i] {
				t.Errorf("Holm(%v, %v) = %v, want %v", tt.p, tt.alpha, got, tt.want)
				break
			}
		}
	}
}

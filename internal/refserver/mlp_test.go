package refserver

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randInput(batch int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, batch*mlpIn)
	for i := range x {
		x[i] = float32(r.Float64()*2 - 1)
	}
	return x
}

func TestMLPEnginesAgree(t *testing.T) {
	w := newMLPWeights()
	for _, tc := range []struct {
		batch    int
		slowdown float64
	}{{1, 1}, {3, 1}, {4, 1}, {7, 1}, {8, 1}, {5, 2.5}} {
		x := randInput(tc.batch, uint64(tc.batch))
		ref := make([]float32, tc.batch*mlpOut)
		opt := make([]float32, tc.batch*mlpOut)
		mlpReference(w, x, ref, tc.batch, tc.slowdown)
		mlpOptimized(w, x, opt, tc.batch, tc.slowdown)
		var nonzero int
		for i := range ref {
			if ref[i] != 0 {
				nonzero++
			}
			diff := math.Abs(float64(ref[i] - opt[i]))
			if diff > 1e-4*math.Max(1, math.Abs(float64(ref[i]))) {
				t.Fatalf("batch %d: element %d: reference %v, optimized %v", tc.batch, i, ref[i], opt[i])
			}
		}
		if nonzero < len(ref)/2 {
			t.Fatalf("batch %d: only %d of %d outputs nonzero; weights look degenerate", tc.batch, nonzero, len(ref))
		}
	}
}

func TestMLPSamplesIndependent(t *testing.T) {
	// A batched engine must give each sample the result it gets alone.
	w := newMLPWeights()
	x := randInput(6, 9)
	all := make([]float32, 6*mlpOut)
	mlpOptimized(w, x, all, 6, 1)
	for n := 0; n < 6; n++ {
		one := make([]float32, mlpOut)
		mlpOptimized(w, x[n*mlpIn:(n+1)*mlpIn], one, 1, 1)
		for i := range one {
			if d := math.Abs(float64(one[i] - all[n*mlpOut+i])); d > 1e-5 {
				t.Fatalf("sample %d element %d: alone %v, in batch %v", n, i, one[i], all[n*mlpOut+i])
			}
		}
	}
}

func BenchmarkMLPEngines(b *testing.B) {
	w := newMLPWeights()
	for _, batch := range []int{1, 8} {
		x := randInput(batch, 3)
		y := make([]float32, batch*mlpOut)
		for _, eng := range []struct {
			name string
			fn   func(*mlpWeights, []float32, []float32, int, float64)
		}{{"reference", mlpReference}, {"optimized", mlpOptimized}} {
			b.Run(eng.name+"/batch="+itoa(batch), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					eng.fn(w, x, y, batch, 1)
				}
				b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "samples/s")
			})
		}
	}
}

func itoa(n int) string { return string(rune('0'+n/10%10)) + string(rune('0'+n%10)) }

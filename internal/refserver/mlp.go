package refserver

import (
	"math"
	"math/rand/v2"
)

// The mlp models compute y = W2·relu(W1·x + b1) + b2 for a 256-wide input,
// a 512-wide hidden layer and a 256-wide output, with weights drawn from a
// fixed-seed PRNG so every server (and test) computes the same function.
const (
	mlpIn     = 256
	mlpHidden = 512
	mlpOut    = 256
	mlpSeed   = 20260101
)

// mlpWeights holds both layers row-major: w1 is [hidden][in], w2 is
// [out][hidden], so each output unit is one contiguous dot product.
type mlpWeights struct {
	w1, b1, w2, b2 []float32
}

func newMLPWeights() *mlpWeights {
	r := rand.New(rand.NewPCG(mlpSeed, mlpSeed^0x9e3779b97f4a7c15))
	fill := func(n int, scale float64) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32((r.Float64()*2 - 1) * scale)
		}
		return s
	}
	return &mlpWeights{
		w1: fill(mlpHidden*mlpIn, 1/math.Sqrt(mlpIn)),
		b1: fill(mlpHidden, 0.1),
		w2: fill(mlpOut*mlpHidden, 1/math.Sqrt(mlpHidden)),
		b2: fill(mlpOut, 0.1),
	}
}

// mlpReference is the straightforward engine: one sample at a time, one
// accumulator per dot product, every weight reloaded for every sample.
func mlpReference(w *mlpWeights, x, y []float32, batch int, slowdown float64) {
	h := make([]float32, mlpHidden)
	for rep := 0; rep < int(slowdown); rep++ {
		for n := 0; n < batch; n++ {
			xs := x[n*mlpIn : (n+1)*mlpIn]
			ys := y[n*mlpOut : (n+1)*mlpOut]
			denseRef(w.w1, w.b1, xs, h, mlpIn, mlpHidden, true)
			denseRef(w.w2, w.b2, h, ys, mlpHidden, mlpOut, false)
		}
	}
	extraRows(slowdown, batch, func(rows int) {
		for n := 0; n < batch; n++ {
			denseRef(w.w1, w.b1, x[n*mlpIn:(n+1)*mlpIn], h[:rows], mlpIn, rows, true)
		}
	})
}

func denseRef(w, b, x, y []float32, nIn, nOut int, relu bool) {
	for j := 0; j < nOut; j++ {
		s := b[j]
		for i := 0; i < nIn; i++ {
			s += w[j*nIn+i] * x[i]
		}
		if relu && s < 0 {
			s = 0
		}
		y[j] = s
	}
}

// extraRows runs the fractional part of a slowdown factor as a partial
// first layer, so a factor of 1.5 costs about 1.5 times the compute.
func extraRows(slowdown float64, batch int, run func(rows int)) {
	frac := slowdown - math.Floor(slowdown)
	if frac <= 0 || batch == 0 {
		return
	}
	// The first layer is half the work; scale rows so frac of the whole
	// model's multiply-adds are repeated.
	rows := int(math.Round(frac * 2 * mlpHidden))
	if rows > mlpHidden {
		rows = mlpHidden
	}
	if rows > 0 {
		run(rows)
	}
}

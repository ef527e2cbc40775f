package changepoint

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// series is levels[i] for lens[i] values each, plus Gaussian noise of sd.
func series(seed uint64, sd float64, levels []float64, lens []int) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	var xs []float64
	for i, l := range levels {
		for range lens[i] {
			xs = append(xs, l+sd*r.NormFloat64())
		}
	}
	return xs
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want []int
		// slack is how far a found index may be from the injected one.
		slack int
	}{
		{"no change, flat", series(1, 0, []float64{100}, []int{30}), nil, 0},
		{"no change, noisy", series(2, 2, []float64{100}, []int{40}), nil, 0},
		{"single step", series(3, 0.5, []float64{100, 110}, []int{15, 15}), []int{15}, 0},
		{"two steps", series(4, 0.5, []float64{100, 90, 105}, []int{12, 12, 12}), []int{12, 24}, 0},
		{"noisy step", series(5, 3, []float64{100, 108}, []int{20, 20}), []int{20}, 2},
		{"too short", []float64{1, 1, 9, 9}, nil, 0},
		{"empty", nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Detect(tt.xs, Options{})
			var idx []int
			for _, c := range got {
				idx = append(idx, c.Index)
				if c.P > 0.01 {
					t.Errorf("change at %d kept with p %v > alpha", c.Index, c.P)
				}
			}
			if len(idx) != len(tt.want) {
				t.Fatalf("changes at %v, want %v", idx, tt.want)
			}
			for i := range idx {
				if d := idx[i] - tt.want[i]; d < -tt.slack || d > tt.slack {
					t.Errorf("change %d at %d, want %d±%d", i, idx[i], tt.want[i], tt.slack)
				}
			}
		})
	}
}

// One series gives one answer: the permutation test is seeded.
func TestDetectDeterministic(t *testing.T) {
	xs := series(9, 3, []float64{100, 104}, []int{20, 20})
	a, b := Detect(xs, Options{}), Detect(xs, Options{})
	if !slices.Equal(a, b) {
		t.Fatalf("two calls differ: %v vs %v", a, b)
	}
}

func TestStepMeans(t *testing.T) {
	got := Detect([]float64{1, 1, 1, 1, 1, 5, 5, 5, 5, 5}, Options{})
	if len(got) != 1 || got[0].Index != 5 || got[0].Before != 1 || got[0].After != 5 {
		t.Fatalf("got %+v, want one change at 5 from 1 to 5", got)
	}
}

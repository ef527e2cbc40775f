package engine

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/perfscen/perfscen/internal/inputdata"
)

// perf_analyzer's GetRandomSequenceLength: n moved by up to the percentage
// either way, truncated toward zero, never below 1.
func TestVariedLength(t *testing.T) {
	cases := []struct {
		n         int
		variation float64
		u         float64
		want      int
	}{
		{20, 20, 0, 16},      // the shortest: −20%
		{20, 20, 0.5, 20},    // the middle
		{20, 20, 0.9999, 23}, // just under +20%: 3.9996 truncated
		{20, 0, 0.9, 20},     // no variation
		{10, 50, 0.25, 8},    // −2.5 truncated toward zero
		{1, 300, 0, 1},       // never below one request
		{4, 100, 0.1, 1},     // 4 − 3.2 → 4 − 3
	}
	for _, tc := range cases {
		if got := variedLength(tc.n, tc.variation, tc.u); got != tc.want {
			t.Errorf("variedLength(%d, %g, %g) = %d, want %d", tc.n, tc.variation, tc.u, got, tc.want)
		}
	}
}

// sequenceLengths walks flat data through a worker's setSequence and
// returns the lengths of the first count sequences it made.
func sequenceLengths(seqLen int, variation float64, fromJSON bool, steps, count int) []int {
	d := &inputdata.Data{FromJSON: fromJSON, Streams: [][]inputdata.Step{make([]inputdata.Step, steps)}}
	pl := &pointLoad{data: d, sequence: true, seqLen: seqLen, seqVariation: variation, seqIDs: &atomic.Uint64{}}
	w := &worker{pl: pl}
	if variation > 0 {
		w.rng = rand.New(rand.NewPCG(7, 0x5e9))
	}
	var out []int
	n := 0
	for len(out) < count {
		w.setSequence(inputdata.Request{})
		n++
		if w.seq.End {
			out = append(out, n)
			n = 0
		}
	}
	return out
}

// Flat data's sequences vary within ±variation of their length, and only
// where perf_analyzer varies them: synthetic data, or a length given for
// JSON data; JSON data's own steps stay one sequence as long as they are.
func TestSequenceLengthVariation(t *testing.T) {
	lengths := sequenceLengths(10, 50, false, 1, 200)
	seen := map[int]bool{}
	for _, n := range lengths {
		if n < 5 || n > 15 {
			t.Fatalf("a sequence of %d requests; want 5 to 15 (10 ± 50%%)", n)
		}
		seen[n] = true
	}
	if len(seen) < 8 {
		t.Errorf("200 sequences took only the lengths %v", seen)
	}
	for _, n := range sequenceLengths(10, 0, false, 1, 20) {
		if n != 10 {
			t.Fatalf("without variation a sequence of %d requests, want 10", n)
		}
	}
	for _, n := range sequenceLengths(0, 50, true, 6, 20) {
		if n != 6 {
			t.Fatalf("JSON data of 6 steps made a sequence of %d requests", n)
		}
	}
	varied := map[int]bool{}
	for _, n := range sequenceLengths(8, 50, true, 6, 50) {
		varied[n] = true
	}
	if len(varied) < 3 {
		t.Errorf("a given length for JSON data did not vary: %v", varied)
	}
}

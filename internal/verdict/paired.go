package verdict

import (
	"math"
	"slices"

	"github.com/perfscen/perfscen/runner/result"
)

// Method names of a comparison's statistics.
const (
	methodUnpaired = "mann-whitney+bootstrap"
	methodPaired   = "signed-rank+bootstrap"
)

// pairedLogRatios pairs the two arms' trials by round and returns each
// pair's log ratio (candidate over reference) of metric. Arms measured
// interleaved (and members of one mix step, measured at once) have one
// window each per round: the same count of trials, and every window of a
// round starts before any window of the next. The machine's slow swings
// — a neighbour's build starting or ending — move both windows of a round
// alike, so their ratio is steadier than either arm; pairing is what lets
// the test see that. Arms measured one after the other do not pair (ok is
// false) and are compared as independent samples. A round in which either
// arm has no value (no request finished, no data for metric) is left out.
func pairedLogRatios(cand, ref *result.Point, metric string) (d []float64, ok bool) {
	n := len(cand.Trials)
	if n == 0 || n != len(ref.Trials) {
		return nil, false
	}
	a, b := byStart(cand.Trials), byStart(ref.Trials)
	for i := range n {
		if a[i].Start.IsZero() || b[i].Start.IsZero() {
			return nil, false
		}
		if i+1 < n {
			last := a[i].Start
			if b[i].Start.After(last) {
				last = b[i].Start
			}
			if !last.Before(a[i+1].Start) || !last.Before(b[i+1].Start) {
				return nil, false
			}
		}
	}
	for i := range n {
		cv, okc := trialValue(&a[i], metric)
		rv, okr := trialValue(&b[i], metric)
		if okc && okr && cv > 0 && rv > 0 {
			d = append(d, math.Log(cv/rv))
		}
	}
	return d, true
}

// trialValue is one trial's value of metric; a trial in which no request
// finished has none (see armValues).
func trialValue(t *result.Trial, metric string) (float64, bool) {
	m := &t.Metrics
	v, ok := m.Value(metric)
	return v, ok && (m.Requests > 0 || m.Errors > 0)
}

func byStart(ts []result.Trial) []result.Trial {
	s := slices.Clone(ts)
	slices.SortStableFunc(s, func(x, y result.Trial) int { return x.Start.Compare(y.Start) })
	return s
}

// shifted is d, each less log(r): log ratios measured from the ratio r.
func shifted(d []float64, r float64) []float64 {
	out := make([]float64, len(d))
	for i, x := range d {
		out[i] = x - math.Log(r)
	}
	return out
}

package scenariorun

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// seqRun is a run with two interleaved arms whose trial values are given.
func seqRun(cand, ref []float64) *result.Run {
	pt := func(id, model string, vs []float64) result.Point {
		p := result.Point{ID: id, Model: model, Coords: map[string]string{"concurrency": "1"}, Status: result.PointStable}
		for i, v := range vs {
			p.Trials = append(p.Trials, result.Trial{Index: i, Metrics: result.Metrics{Throughput: v, Requests: 100}})
		}
		p.Summary = result.Metrics{Throughput: vs[0], Requests: 100}
		return p
	}
	return &result.Run{Scenario: "s", Status: result.StatusComplete, Points: []result.Point{pt("c/c=1", "c", cand), pt("r/c=1", "r", ref)}}
}

// spread returns n values around v, ±2% in a fixed pattern.
func spread(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v * (1 + 0.02*float64(i%5-2)/2)
	}
	return out
}

func seqPlan(maxExtra int, maxTime time.Duration) *plan.Plan {
	return &plan.Plan{Measurement: plan.Measurement{Trials: 10, Window: time.Second},
		Checks: plan.Checks{
			Comparisons: []plan.Comparison{{Name: "faster", Candidate: "c", Reference: "r", Metric: "throughput", MinRatio: 1.15}},
			Gate:        plan.Gate{MaxExtraTrials: maxExtra, MaxExtraTime: maxTime}}}
}

// A check on its bound asks for more trials of both arms, look after
// look, until the extra-trial budget is spent; the verdict then stays
// inconclusive and names the trials that would decide it.
func TestSequentialExtendsUntilBudget(t *testing.T) {
	pl := seqPlan(20, time.Hour)
	var log strings.Builder
	s := newSequential(pl, pl.Checks, nil, verdict.Options{}, &log)
	clock := time.Unix(0, 0)
	s.now = func() time.Time { clock = clock.Add(time.Minute); return clock }
	n := 10
	for look := 1; ; look++ {
		ids, more := s.extend(seqRun(spread(n, 1150), spread(n, 1000)))
		if len(ids) == 0 {
			if look != 3 {
				t.Fatalf("stopped at look %d, want 3 (20 extra trials in rounds of 10)", look)
			}
			break
		}
		if fmt.Sprint(ids) != "[c/c=1 r/c=1]" || more != 10 {
			t.Fatalf("look %d: extend %v by %d", look, ids, more)
		}
		n += more
	}
	v := s.final(seqRun(spread(n, 1150), spread(n, 1000)))
	var cmp verdict.Check
	for _, c := range v.Checks {
		if c.Kind == verdict.KindComparison {
			cmp = c
		}
	}
	if cmp.Status != verdict.StatusInconclusive || cmp.N != 30 || !strings.Contains(cmp.Message, "look 3 of 3") || exitcode.ForOutcome(v.Outcome()) != exitcode.Inconclusive {
		t.Fatalf("final: %s (n=%d, exit %d) %s", cmp.Status, cmp.N, exitcode.ForOutcome(v.Outcome()), cmp.Message)
	}
	if !strings.Contains(log.String(), "measuring 10 more trial(s), interleaved, at c/c=1, r/c=1") {
		t.Errorf("no progress line:\n%s", log.String())
	}
}

// A decided check asks for nothing; zero extra trials means one look at
// the full α; the time budget stops a round that would not fit.
func TestSequentialStops(t *testing.T) {
	pl := seqPlan(20, time.Hour)
	s := newSequential(pl, pl.Checks, nil, verdict.Options{}, io.Discard)
	if ids, _ := s.extend(seqRun(spread(10, 1400), spread(10, 1000))); len(ids) != 0 {
		t.Fatalf("a clear win asked for more trials: %v", ids)
	}
	if v := s.final(nil); exitcode.ForOutcome(v.Outcome()) != exitcode.OK {
		t.Fatalf("clear win: exit %d", exitcode.ForOutcome(v.Outcome()))
	}

	pl = seqPlan(0, time.Hour)
	s = newSequential(pl, pl.Checks, nil, verdict.Options{}, io.Discard)
	if s.opts.MaxLooks != 1 {
		t.Fatalf("max_extra_trials 0: %d looks", s.opts.MaxLooks)
	}
	if ids, _ := s.extend(seqRun(spread(10, 1150), spread(10, 1000))); len(ids) != 0 {
		t.Fatalf("no budget, still extended: %v", ids)
	}

	pl = seqPlan(20, 15*time.Second) // one round is 10 trials × 2 points × 1 s
	var log strings.Builder
	s = newSequential(pl, pl.Checks, nil, verdict.Options{}, &log)
	if ids, _ := s.extend(seqRun(spread(10, 1150), spread(10, 1000))); len(ids) != 0 || !strings.Contains(log.String(), "gate.max_extra_time") {
		t.Fatalf("time budget ignored: %v\n%s", ids, log.String())
	}
}

package verdict

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

func TestSettle(t *testing.T) {
	cmp := func(key CheckKey, name, point, ref string, s Status) Check {
		return Check{Kind: KindComparison, Key: key, Name: name, Point: point, RefPoint: ref, Status: s}
	}
	bl := func(key CheckKey, name, point string, s Status) Check {
		return Check{Kind: KindBaseline, Key: key, Name: name, Point: point, Status: s}
	}
	th := func(key CheckKey, name, point string, s Status) Check {
		return Check{Kind: KindThreshold, Key: key, Name: name, Point: point, Status: s}
	}
	tests := []struct {
		name       string
		prev, next []Check
		want       []Status
	}{
		{"a decision stands, an inconclusive check takes the new look's",
			[]Check{cmp("comparison.0.max_ratio", "a", "p", "r", StatusPass), cmp("comparison.1.max_ratio", "b", "p", "r", StatusInconclusive)},
			[]Check{cmp("comparison.0.max_ratio", "a", "p", "r", StatusInconclusive), cmp("comparison.1.max_ratio", "b", "p", "r", StatusFail)},
			[]Status{StatusPass, StatusFail}},
		// Two comparisons of one candidate against two servers' builds,
		// both named "no slower": only the first was decided at look 1.
		{"one display name on two arms",
			[]Check{cmp("comparison.0.max_ratio", "no slower <= 1.05", "new/m/c=1", "old/m/c=1", StatusPass),
				cmp("comparison.1.max_ratio", "no slower <= 1.05", "new/m/c=1", "other/m/c=1", StatusInconclusive)},
			[]Check{cmp("comparison.0.max_ratio", "no slower <= 1.05", "new/m/c=1", "old/m/c=1", StatusInconclusive),
				cmp("comparison.1.max_ratio", "no slower <= 1.05", "new/m/c=1", "other/m/c=1", StatusFail)},
			[]Status{StatusPass, StatusFail}},
		{"one display name for two baseline rules",
			[]Check{bl("baseline.0", "p95", "", StatusSkip), bl("baseline.1", "p95", "", StatusInconclusive)},
			[]Check{bl("baseline.0", "p95", "", StatusFail), bl("baseline.1", "p95", "", StatusFail)},
			[]Status{StatusSkip, StatusFail}},
		{"one rule at two points is two checks",
			[]Check{bl("baseline.0", "p95", "a/c=1", StatusPass)},
			[]Check{bl("baseline.0", "p95", "a/c=1", StatusFail), bl("baseline.0", "p95", "a/c=2", StatusFail)},
			[]Status{StatusPass, StatusFail}},
		{"a check without a key is decided afresh",
			[]Check{{Kind: KindComparison, Name: "x", Point: "p", Status: StatusPass}},
			[]Check{{Kind: KindComparison, Name: "x", Point: "p", Status: StatusFail}},
			[]Status{StatusFail}},
		// A threshold spends no α: it judges the point's figures as they
		// are after the extra trials, the figures the tables show.
		{"a threshold is judged again on the new look's figures",
			[]Check{th("threshold.0", "p95 < 30ms", "a/c=1", StatusPass), th("threshold.1", "errors == 0", "a/c=1", StatusFail)},
			[]Check{th("threshold.0", "p95 < 30ms", "a/c=1", StatusFail), th("threshold.1", "errors == 0", "a/c=1", StatusFail)},
			[]Status{StatusFail, StatusFail}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := &Verdict{Interrupted: true, Notices: []string{"n"}, Checks: tt.next}
			got := Settle(&Verdict{Checks: tt.prev}, next)
			var st []Status
			for _, c := range got.Checks {
				st = append(st, c.Status)
			}
			if !slices.Equal(st, tt.want) {
				t.Errorf("statuses %v, want %v", st, tt.want)
			}
			if !got.Interrupted || len(got.Notices) != 1 {
				t.Errorf("the new look's run state was lost: %+v", got)
			}
		})
	}
}

// Two comparisons of one candidate share a display name but not a
// reference (the same model on two other servers): the one decided at look
// 1 keeps its outcome, and the other is decided by its own later look,
// never by its namesake's.
func TestSettleComparisonsSharingAName(t *testing.T) {
	tests := []struct {
		name string
		// p95 of the first reference (decided at look 1), the second
		// reference at look 1 (on the bound) and in its 20 later trials.
		firstRef, laterRef float64
		want               [2]Status
	}{
		{"decided pass, then a fail", 30000, 14000, [2]Status{StatusPass, StatusFail}},
		{"decided fail, then a pass", 14000, 30000, [2]Status{StatusFail, StatusPass}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 12))
			cand := noisy(rng, 10, 1000, 20000, 0.02)
			first := noisy(rng, 10, 1000, tt.firstRef, 0.02)
			onBound := noisy(rng, 10, 1000, 19048, 0.02) // 20000/19048 = 1.05, the bound
			run := mkRun(mkPoint("new/m/c=1", "new/m", c(1), cand), mkPoint("old/m/c=1", "old/m", c(1), first),
				mkPoint("other/m/c=1", "other/m", c(1), onBound))
			checks := plan.Checks{Comparisons: []plan.Comparison{
				{Name: "no slower", Candidate: "new/m", Reference: "old/m", Metric: "p95", MaxRatio: 1.05},
				{Name: "no slower", Candidate: "new/m", Reference: "other/m", Metric: "p95", MaxRatio: 1.05},
			}}
			look1 := Options{Look: 1, MaxLooks: 3}.Evaluate(checks, run, nil)
			if len(look1.Checks) != 2 || look1.Checks[0].Status != tt.want[0] || look1.Checks[1].Status != StatusInconclusive {
				t.Fatalf("look 1 is not one decided and one open check, so the test does not exercise Settle: %+v", look1.Checks)
			}
			if a, b := look1.Checks[0], look1.Checks[1]; a.Name != b.Name || a.Point != b.Point {
				t.Fatalf("the two checks should share name and point: %q@%s, %q@%s", a.Name, a.Point, b.Name, b.Point)
			}
			// More trials of both arms of the open check decide it.
			grow(&run.Points[0], noisy(rng, 20, 1000, 20000, 0.02))
			grow(&run.Points[2], noisy(rng, 20, 1000, tt.laterRef, 0.02))
			look2 := Settle(look1, Options{Look: 2, MaxLooks: 3}.Evaluate(checks, run, nil))
			if got := look2.Checks[0]; got.Status != tt.want[0] || got.RefPoint != "old/m/c=1" {
				t.Errorf("the check against old: %s against %s, want the look-1 %s against old/m/c=1", got.Status, got.RefPoint, tt.want[0])
			}
			if got := look2.Checks[1]; got.Status != tt.want[1] || got.RefPoint != "other/m/c=1" {
				t.Errorf("the check against other: %s against %s (%s), want %s against other/m/c=1", got.Status, got.RefPoint, got.Message, tt.want[1])
			}
		})
	}
}

// grow appends the trials of ts to p.
func grow(p *result.Point, ts trialSet) {
	for _, tr := range mkPoint(p.ID, p.Model, p.Coords, ts).Trials {
		tr.Index = len(p.Trials)
		p.Trials = append(p.Trials, tr)
	}
}

// Every check a verdict holds has a key, and no two share key and point,
// so Settle can tell each from every other.
func TestEveryCheckHasItsOwnKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	base := history(t, rng, 8, 0.01)
	validated := mkPoint("b/c=1", "b", c(1), noisy(rng, 10, 1000, 20000, 0.02))
	validated.Validation = result.Validation{Enabled: true, Checked: 10, Mismatches: 1}
	failed := mkPoint("b/c=2", "b", c(2), trialSet{})
	failed.Status = result.PointFailed
	unstable := mkPoint("b/c=4", "b", c(4), noisy(rng, 10, 1000, 20000, 0.02))
	unstable.Status = result.PointUnstable
	run := mkRun(mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000, 20000, 0.02)), validated, failed, unstable)
	run.Errors = []string{"metrics endpoint went away"}
	run.Points[0].Summary.Errors = 3
	p95 := plan.Threshold{Text: "p95 < 30ms", Metric: "p95", Op: "<", Value: 30000}
	nowhere := p95
	nowhere.Selector.Models = []string{"absent"}
	checks := plan.Checks{
		Thresholds: []plan.Threshold{p95, p95, nowhere, nowhere},
		Comparisons: []plan.Comparison{
			{Name: "same", Candidate: "b", Reference: "a", Metric: "p95", MinRatio: 0.5, MaxRatio: 1.5},
			{Name: "same", Candidate: "a", Reference: "b", Metric: "p95", MaxRatio: 1.5},
			{Name: "same", Candidate: "absent", Reference: "a", Metric: "p95", MaxRatio: 1.5},
		},
		Baseline: &plan.Baseline{Path: "b.json", Metrics: []string{"throughput", "p95"}},
	}
	v := Options{}.Evaluate(checks, run, base)
	kinds := map[Kind]bool{}
	seen := map[lookID]Check{}
	for _, c := range v.Checks {
		kinds[c.Kind] = true
		if c.Key == "" {
			t.Errorf("%s check %q at %q has no key", c.Kind, c.Name, c.Point)
			continue
		}
		if d, dup := seen[lookIDOf(c)]; dup {
			t.Errorf("%q at %q and %q at %q share key %s", d.Name, d.Point, c.Name, c.Point, c.Key)
		}
		seen[lookIDOf(c)] = c
	}
	for _, k := range []Kind{KindThreshold, KindComparison, KindBaseline, KindValidation, KindStability, KindErrors} {
		if !kinds[k] {
			t.Errorf("no %s check: the run no longer covers every kind", k)
		}
	}
}

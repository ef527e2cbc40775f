package verdict

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

func TestAutomaticFailsPointsWhereNothingFinished(t *testing.T) {
	run := &result.Run{Status: result.StatusComplete, Points: []result.Point{
		{ID: "hung/c=1", Model: "hung", Status: result.PointUnstable},
		{ID: "ok/c=1", Model: "ok", Status: result.PointStable, Summary: result.Metrics{Requests: 10, Throughput: 5}},
		{ID: "imported/c=1", Model: "imported", Status: result.PointImported},
	}}
	var hits []Check
	for _, c := range (Options{AllowUnstable: true}).Automatic(run) {
		if c.Name == "requests completed" {
			hits = append(hits, c)
		}
	}
	if len(hits) != 1 || hits[0].Point != "hung/c=1" || hits[0].Status != StatusFail || !hits[0].Environment {
		t.Fatalf("want one environment failure for hung/c=1, got %+v", hits)
	}
	// A threshold over the hung point has no data: it fails as could not
	// measure, never as a failure shown by data, so the run exits 3.
	for _, metric := range []string{"error_rate", "p99"} {
		ths := Thresholds(thresholdsFor(metric, "<=", 0.01), &result.Run{Points: run.Points[:1]})
		if len(ths) != 1 || ths[0].Status != StatusFail || !ths[0].Environment {
			t.Fatalf("%s threshold on a point with nothing finished: %+v", metric, ths)
		}
		v := &Verdict{Checks: append(ths, hits...)}
		if o := v.Outcome(); o != OutcomeNotMeasured {
			t.Errorf("%s threshold on a point with nothing finished: outcome %s, want %s", metric, o, OutcomeNotMeasured)
		}
	}
}

func thresholdsFor(metric, op string, v float64) []plan.Threshold {
	return []plan.Threshold{{Text: metric + " " + op, Metric: metric, Op: op, Value: v}}
}

func TestOutcomeRanksFailOverInconclusiveOverPass(t *testing.T) {
	pass := Check{Status: StatusPass}
	inc := Check{Status: StatusInconclusive}
	fail := Check{Status: StatusFail}
	cases := []struct {
		checks []Check
		want   Outcome
	}{
		{[]Check{pass}, OutcomePass},
		{[]Check{pass, inc}, OutcomeInconclusive},
		{[]Check{inc, fail}, OutcomeFail},
	}
	for _, c := range cases {
		v := &Verdict{Checks: c.checks}
		if got := v.Outcome(); got != c.want {
			t.Errorf("%v: outcome %s, want %s", c.checks, got, c.want)
		}
	}
}

// A point whose requests all failed slowly (a deadline each) is not
// stopped early and ends unstable, its figures zeros of nothing: with
// allow_unstable its thresholds and comparisons must say "could not
// measure" as its error budget does, never fail on data (exit 1).
func TestNoRequestSucceededIsNotMeasured(t *testing.T) {
	failing := result.Point{ID: "watch/c=1", Model: "watch", Status: result.PointUnstable, Coords: c(1),
		Summary: result.Metrics{Errors: 6, ErrorRate: 1}}
	for range 3 {
		failing.Trials = append(failing.Trials, result.Trial{Metrics: result.Metrics{Errors: 2, ErrorRate: 1}})
	}
	run := &result.Run{Status: result.StatusComplete, Points: []result.Point{failing}}
	checks := (Options{AllowUnstable: true}).Automatic(run)
	for _, th := range [][]plan.Threshold{thresholdsFor("p99", "<", 1), thresholdsFor("throughput", ">", 1), thresholdsFor("errors", "==", 0)} {
		got := Thresholds(th, run)
		if len(got) != 1 || got[0].Status != StatusFail || !got[0].Environment || !strings.Contains(got[0].Message, "no request succeeded at watch/c=1 (6 failed)") {
			t.Errorf("%s: %+v", th[0].Text, got)
		}
		checks = append(checks, got...)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	cmpRun := mkRun(failing, mkPoint("ref/c=1", "ref", c(1), noisy(rng, 10, 1000, 20000, 0.02)))
	got := Options{}.Comparisons([]plan.Comparison{{Candidate: "watch", Reference: "ref", Metric: "throughput", MinRatio: 0.9}}, cmpRun)
	if len(got) != 1 || got[0].Status != StatusFail || !got[0].Environment {
		t.Errorf("comparison: %+v", got)
	}
	checks = append(checks, got...)
	if o := (&Verdict{Checks: checks}).Outcome(); o != OutcomeNotMeasured {
		t.Errorf("outcome %s, want %s", o, OutcomeNotMeasured)
	}
}

package verdict

import (
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

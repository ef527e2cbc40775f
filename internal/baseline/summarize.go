package baseline

import (
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Summarize turns a run into a history entry: every metric with data, per
// trial and for the point summary, and the trial histograms.
func Summarize(run *result.Run) Run {
	r := Run{
		RunID:           run.RunID,
		Started:         run.Started,
		ScenarioHash:    run.ScenarioHash,
		Source:          run.Source,
		PerfscenVersion: run.Environment.PerfscenVersion,
		Points:          map[string]*Point{},
	}
	for i := range run.Points {
		p := &run.Points[i]
		if p.Search != "" {
			// A search's probes differ from run to run as its answer
			// moves; its figure is the search's own point.
			continue
		}
		bp := &Point{
			Model:   p.Model,
			Coords:  p.Coords,
			Status:  p.Status,
			Summary: values(&p.Summary),
			Errors:  p.Errors.Count,
		}
		for j := range p.Trials {
			t := &p.Trials[j]
			bp.Trials = append(bp.Trials, Trial{Values: values(&t.Metrics), Histogram: t.Histogram, Disturbance: t.Disturbance})
		}
		r.Points[p.ID] = bp
	}
	return r
}

func values(m *result.Metrics) map[string]float64 {
	out := map[string]float64{}
	for _, name := range plan.MetricNames() {
		if v, ok := m.Value(name); ok {
			out[name] = v
		}
	}
	return out
}

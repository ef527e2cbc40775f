// Package history turns a baseline file, and optionally result files of
// later runs, into per point × metric series over time with the gate's
// band, the runs that failed and the change points: "when did it get
// slower?".
package history

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/changepoint"
	"github.com/perfscen/perfscen/runner/result"
)

// Entry is one run's figure in a series.
type Entry struct {
	RunID string `json:"run_id,omitempty"`
	// Started is when the run began: a series is in this order, whatever
	// order its runs were recorded in. Recorded is when it entered the
	// baseline (a result file's: when it finished).
	Started  time.Time `json:"started"`
	Recorded time.Time `json:"recorded"`
	// Version is the perfscen version that measured the run (make build
	// stamps it with git describe: the commit perfscen was built from).
	Version string  `json:"version,omitempty"`
	Testbed string  `json:"testbed"`
	Value   float64 `json:"value"`
	// Failed: the run's gate failed a check on this point and metric.
	Failed bool `json:"failed,omitempty"`
	// Source is "baseline" or the result file's path.
	Source string `json:"source"`
}

// Series is one testbed × point × metric over runs, in the order they
// started.
type Series struct {
	Testbed string  `json:"testbed"`
	Point   string  `json:"point"`
	Metric  string  `json:"metric"`
	Entries []Entry `json:"entries"`
	// Center, Lo and Hi are the baseline gate's band: the history's
	// center, divided and multiplied by 1 + the smallest change the
	// history detects (MDE). HasBand is false when the history has fewer
	// than two runs.
	Center, Lo, Hi, MDE float64
	HasBand             bool
	Changes             []changepoint.Change `json:"changes,omitempty"`
}

// Report is a scenario's history.
type Report struct {
	Scenario string
	Series   []Series
	// Skipped names result files left out, with why.
	Skipped []string
}

// Build collects the series of metrics (every metric the history holds
// when empty) from f and the results (path → run). A result of another
// scenario is skipped; a result already recorded in f (same run id) only
// adds its failures.
func Build(f *baseline.File, results map[string]*result.Run, metrics []string) Report {
	rep := Report{Scenario: f.Scenario}
	type key struct{ tb, point, metric string }
	series := map[key]*Series{}
	idx := map[key]map[string]int{} // run id → entry index
	add := func(tb, pid, m string, e Entry) {
		k := key{tb, pid, m}
		s := series[k]
		if s == nil {
			s = &Series{Testbed: tb, Point: pid, Metric: m}
			series[k], idx[k] = s, map[string]int{}
		}
		if e.RunID != "" {
			if i, ok := idx[k][e.RunID]; ok {
				s.Entries[i].Failed = s.Entries[i].Failed || e.Failed
				return
			}
			idx[k][e.RunID] = len(s.Entries)
		}
		s.Entries = append(s.Entries, e)
	}
	want := func(tb *baseline.Testbed, pid string) []string {
		return tb.Noise.Metrics(pid, metrics)
	}
	for _, id := range f.TestbedIDs() {
		tb := f.Testbeds[id]
		for _, r := range tb.Runs {
			for pid, p := range r.Points {
				for _, m := range want(tb, pid) {
					if v, ok := p.Summary[m]; ok {
						add(id, pid, m, Entry{RunID: r.RunID, Started: r.Started, Recorded: r.Recorded, Version: r.PerfscenVersion, Testbed: id, Value: v, Source: "baseline"})
					}
				}
			}
		}
	}
	paths := make([]string, 0, len(results))
	for p := range results {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		run := results[path]
		if run.Scenario != f.Scenario {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: scenario %q, not %q", path, run.Scenario, f.Scenario))
			continue
		}
		failed := failures(run)
		s := baseline.Summarize(run)
		tbID := run.Environment.Testbed
		for pid, p := range s.Points {
			ms := metrics
			if tb := f.Testbeds[tbID]; tb != nil && len(metrics) == 0 {
				ms = want(tb, pid)
			}
			if len(ms) == 0 {
				ms = baseline.ShowMetrics
			}
			for _, m := range ms {
				if v, ok := p.Summary[m]; ok {
					add(tbID, pid, m, Entry{RunID: run.RunID, Started: run.Started, Recorded: run.Finished, Version: run.Environment.PerfscenVersion,
						Testbed: tbID, Value: v, Failed: failed[[2]string{pid, m}], Source: path})
				}
			}
		}
	}
	for k, s := range series {
		slices.SortFunc(s.Entries, byStart)
		if tb := f.Testbeds[k.tb]; tb != nil {
			if est, ok := tb.Noise[k.point][k.metric]; ok && est.Runs >= 2 && est.MDE > 0 {
				// The gate compares on the log scale: a change of MDE either
				// way is a ratio of 1+MDE up or down.
				s.Center, s.Lo, s.Hi, s.HasBand = est.Center, est.Center/(1+est.MDE), est.Center*(1+est.MDE), true
				s.MDE = est.MDE
			}
		}
		vals := make([]float64, len(s.Entries))
		for i, e := range s.Entries {
			vals[i] = e.Value
		}
		s.Changes = changepoint.Detect(vals, changepoint.Options{})
		rep.Series = append(rep.Series, *s)
	}
	slices.SortFunc(rep.Series, func(a, b Series) int {
		if c := cmpStr(a.Testbed, b.Testbed); c != 0 {
			return c
		}
		if c := cmpStr(a.Point, b.Point); c != 0 {
			return c
		}
		if c := metricOrder(a.Metric) - metricOrder(b.Metric); c != 0 {
			return c
		}
		return cmpStr(a.Metric, b.Metric)
	})
	return rep
}

// byStart orders entries by when their runs started (runs without a start
// time, as some imports are, by when they were recorded), then by run id,
// source and value, so that no tie is left to the order the runs were
// recorded or the result files read in.
func byStart(a, b Entry) int {
	if c := a.When().Compare(b.When()); c != 0 {
		return c
	}
	if c := cmpStr(a.RunID, b.RunID); c != 0 {
		return c
	}
	if c := cmpStr(a.Source, b.Source); c != 0 {
		return c
	}
	return cmp.Compare(a.Value, b.Value)
}

// When is the time an entry is placed at: its start, else its recording.
func (e Entry) When() time.Time {
	if e.Started.IsZero() {
		return e.Recorded
	}
	return e.Started
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// metricOrder lists the headline metrics first, the rest by name after.
func metricOrder(m string) int {
	if i := slices.Index(baseline.ShowMetrics, m); i >= 0 {
		return i
	}
	return len(baseline.ShowMetrics)
}

// failures are the point × metric pairs a run's gate failed.
func failures(run *result.Run) map[[2]string]bool {
	out := map[[2]string]bool{}
	if run.Verdict == nil {
		return out
	}
	for _, c := range run.Verdict.Checks {
		if c.Status == "fail" && c.Point != "" && c.Metric != "" {
			out[[2]string{c.Point, c.Metric}] = true
		}
	}
	return out
}

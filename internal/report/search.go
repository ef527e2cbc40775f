package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// searchBlock writes what a search found and the loads it probed, in the
// order it probed them.
func searchBlock(w io.Writer, p *result.Point) {
	s := p.Searched
	dim, unit := "concurrency", ""
	if p.Mode == plan.LoadRequestRate {
		dim, unit = "request rate", "/s"
	}
	end := strconv.FormatFloat(s.End, 'f', -1, 64) + unit
	if s.End == 0 {
		end = "∞"
	}
	how := "each probe judged on its median's interval"
	if s.Decide == plan.DecideMerged {
		how = "each probe judged on its kept windows merged, as perf_analyzer does"
	}
	fmt.Fprintf(w, "Search: %s (%s, %s search of %s in [%s%s, %s] by %s; %s)\n", p.Coords["search"], s.Condition, s.Method, dim,
		strconv.FormatFloat(s.Start, 'f', -1, 64), unit, end, strconv.FormatFloat(s.Step, 'f', -1, 64), how)
	found := "none"
	if s.Found {
		found = strconv.FormatFloat(s.Value, 'f', -1, 64) + unit
	}
	fmt.Fprintf(w, "  Found: %s: %s\n", found, s.Message)
	metric, vunit := s.ConditionMetric()
	for _, pr := range s.Probes {
		interval := ""
		if pr.Confidence > 0 {
			interval = fmt.Sprintf(", %.0f%% interval [%s, %s]", 100*pr.Confidence, quantity(pr.Lo, vunit), quantity(pr.Hi, vunit))
		}
		fmt.Fprintf(w, "  Probe %s%s: %s (%s %s%s, %d trial(s))\n", strconv.FormatFloat(pr.Level, 'f', -1, 64), unit, pr.Outcome,
			metric, quantity(pr.Value, vunit), interval, pr.Trials)
	}
}

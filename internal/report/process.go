package report

import (
	"fmt"
	"strings"

	"github.com/perfscen/perfscen/runner/result"
)

// ProcessText is the server process's figures per inference in one line
// (console and Markdown point blocks), "" without them.
func ProcessText(p *result.ProcessStats) string {
	if p == nil || p.Inferences <= 0 {
		return ""
	}
	parts := []string{fmt.Sprintf("CPU %s usec/infer", usec(p.CPUUs))}
	if p.Work != nil {
		parts = append(parts, fmt.Sprintf("work %.4g units/infer", *p.Work))
	}
	if p.RunQueueUs != nil {
		parts = append(parts, fmt.Sprintf("run queue %s usec/infer", usec(*p.RunQueueUs)))
	}
	if p.Instructions != nil {
		parts = append(parts, fmt.Sprintf("%.4g instructions/infer", *p.Instructions))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%d inferences)", p.Inferences)
}

// processHeader and processRows are the "Server process" table: each
// point's server CPU figures per inference; nil rows when no point has
// them.
var processHeader = []string{"point", "CPU/infer", "work/infer", "run queue/infer", "instructions/infer", "inferences"}

func processRows(run *result.Run) [][]string {
	var rows [][]string
	for i := range run.Points {
		p := &run.Points[i]
		figs := p.FigureMetrics()
		ps := figs.Process
		if ps == nil || ps.Inferences <= 0 {
			continue
		}
		opt := func(v *float64, f func(float64) string) string {
			if v == nil {
				return "-"
			}
			return f(*v)
		}
		count := func(v float64) string { return fmt.Sprintf("%.4g", v) }
		us := func(v float64) string { return quantity(v, "us") }
		rows = append(rows, []string{p.ID, us(ps.CPUUs), opt(ps.Work, count), opt(ps.RunQueueUs, us), opt(ps.Instructions, count), fmt.Sprint(ps.Inferences)})
	}
	return rows
}

// processCSVColumns are appended to the CSV (before Status) when a point
// has server process figures: perf_analyzer's columns stay where its
// readers expect them.
var processCSVColumns = []string{"Server CPU/infer", "Server Work/infer", "Server Run Queue/infer", "Server Instructions/infer"}

func processCSVHeader(line string) string {
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), ",Status")
	return line + "," + strings.Join(processCSVColumns, ",") + ",Status\n"
}

func processCSVRow(row string, ps *result.ProcessStats) string {
	cells := make([]string, len(processCSVColumns))
	if ps != nil && ps.Inferences > 0 {
		opt := func(v *float64) string {
			if v == nil {
				return ""
			}
			return fmt.Sprintf("%.6g", *v)
		}
		cells = []string{usec(ps.CPUUs), opt(ps.Work), opt(ps.RunQueueUs), opt(ps.Instructions)}
		if ps.RunQueueUs != nil {
			cells[2] = usec(*ps.RunQueueUs)
		}
	}
	return strings.TrimSuffix(row, "\n") + "," + strings.Join(cells, ",") + "\n"
}

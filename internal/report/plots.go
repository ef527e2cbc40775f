package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/internal/report/svg"
	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// The HTML report's charts, drawn by internal/report/svg. Every figure
// here is one the verdict or the run holds: no chart computes statistics.

// chartWidth is every chart's width in px (the page is at most 1400).
const chartWidth = 1100

// figure is one chart with the words that say how to read it.
type figure struct {
	ID, Heading, Caption string
	SVG                  template.HTML
}

// html marks SVG the svg package drew (numbers and escaped text) as safe
// to inline.
func html(b []byte) template.HTML { return template.HTML(b) } // #nosec G203: drawn by internal/report/svg, every text escaped

func statusColor(s verdict.Status) string {
	switch s {
	case verdict.StatusPass:
		return svg.ColorPass
	case verdict.StatusFail:
		return svg.ColorFail
	case verdict.StatusInconclusive, verdict.StatusNotGated:
		// A check that could not see its change is no green pass.
		return svg.ColorInconclusive
	}
	return svg.ColorNeutral
}

func statusWord(c verdict.Check) string {
	switch c.Status {
	case verdict.StatusFail:
		return "FAIL"
	case verdict.StatusInconclusive:
		return "inconclusive"
	case verdict.StatusNotGated:
		return "not gated"
	}
	return string(c.Status)
}

// boundLegend and the others are the legend entries the forest charts share.
var (
	estimateLegend = svg.LegendItem{Text: "median ratio", HasMarker: true, Shape: svg.Diamond, Color: svg.ColorNeutral}
	boundLegend    = svg.LegendItem{Text: "bound (the shaded side fails)", Fill: "#ffebe9", Stroke: svg.Stroke{Color: svg.ColorFail, Width: 2, Dash: "5 3"}}
	noChangeLegend = svg.LegendItem{Text: "1 = no difference", Stroke: svg.Stroke{Color: "#8c959f", Width: 1.5}}
)

// comparisonFigure draws every same-run comparison as the ratio it was
// decided on, its interval and its bound: the headline verdict.
func comparisonFigure(v *verdict.Verdict) (figure, bool) {
	if v == nil {
		return figure{}, false
	}
	f := svg.Forest{Title: "Comparisons: candidate ÷ reference", XLabel: "ratio of the candidate's figure to the reference's (median over trials)", Ref: 1}
	for _, c := range v.Checks {
		if c.Kind != verdict.KindComparison || c.NoValue || !(c.Value > 0) {
			continue
		}
		r := svg.Row{Label: c.Name, Sub: where(c), Value: c.Value, Op: c.Op, Bound: c.Bound, Color: statusColor(c.Status), Note: statusWord(c)}
		detail := []string{"ratio " + numfmt.Ratio(c.Value)}
		if c.Lo > 0 && c.Hi > 0 {
			r.Lo, r.Hi, r.HasInterval = c.Lo, c.Hi, true
			detail = append(detail, fmt.Sprintf("%s [%s, %s]", numfmt.Percent(c.Confidence), numfmt.Ratio(c.Lo), numfmt.Ratio(c.Hi)))
		}
		if c.P > 0 {
			detail = append(detail, numfmt.PEq("p", c.P))
		}
		r.Detail = strings.Join(detail, ", ")
		f.Rows = append(f.Rows, r)
	}
	if len(f.Rows) == 0 {
		return figure{}, false
	}
	f.Legend = []svg.LegendItem{estimateLegend,
		{Text: "bootstrap interval (the deciding level, at least 95%)", Stroke: svg.Stroke{Color: svg.ColorNeutral, Width: 3}}, boundLegend, noChangeLegend}
	return figure{ID: "comparisons", Heading: "Comparisons",
		Caption: "Each row is one comparison at one point: the diamond is the median ratio over the interleaved rounds, the bar its bootstrap interval at the level of the rank test that decides (95% or more: the label says which). " +
			"A comparison passes when the interval lies wholly on the white side of its bound and the rank test agrees, fails when both show the shaded side, and is inconclusive otherwise (the check's message says which part did not decide).",
		SVG: html(f.Render(chartWidth))}, true
}

// baselineFigure draws the baseline gate's checks as this run's figure
// over the history's centre, with the check's interval and bound: only
// the metrics the baseline gates appear.
func baselineFigure(v *verdict.Verdict) (figure, bool) {
	if v == nil {
		return figure{}, false
	}
	f := svg.Forest{Title: "Baseline gate: this run ÷ its history", XLabel: "this run's figure ÷ the history's centre (geometric mean of its run medians)", Ref: 1}
	for _, c := range v.Checks {
		if c.Kind != verdict.KindBaseline || c.NoValue || !(c.Value > 0) || !(c.Center > 0) {
			continue
		}
		r := svg.Row{Label: c.Name, Sub: c.Point, Value: c.Value / c.Center, Color: statusColor(c.Status), Note: statusWord(c)}
		if c.Class != "" {
			r.Note += " (" + string(c.Class) + ")"
		}
		if c.Bound > 0 {
			r.Op, r.Bound = c.Op, c.Bound/c.Center
		}
		if (c.Lo != 0 || c.Hi != 0) && !c.Uncalibrated && 1+c.Lo > 0 {
			r.Lo, r.Hi, r.HasInterval = 1+c.Lo, 1+c.Hi, true
		}
		detail := numfmt.Value(c.Value, c.Unit) + " vs " + numfmt.Value(c.Center, c.Unit)
		if c.Bound > 0 {
			detail += ", bound " + c.Op + " " + numfmt.Value(c.Bound, c.Unit)
		}
		if c.Uncalibrated {
			detail += ", uncalibrated"
		}
		r.Detail = detail
		f.Rows = append(f.Rows, r)
	}
	if len(f.Rows) == 0 {
		return figure{}, false
	}
	f.Legend = []svg.LegendItem{{Text: "this run ÷ history", HasMarker: true, Shape: svg.Diamond, Color: svg.ColorNeutral},
		{Text: "interval of the change", Stroke: svg.Stroke{Color: svg.ColorNeutral, Width: 3}}, boundLegend, {Text: "1 = the history's centre", Stroke: svg.Stroke{Color: "#8c959f", Width: 1.5}}}
	return figure{ID: "baseline", Heading: "Baseline gate",
		Caption: "Each row is one gated metric at one point, as a ratio to the history's centre. The bound is the one the check was held to (tolerance and multiple-testing corrections included); an uncalibrated check has no interval the data supports.",
		SVG:     html(f.Render(chartWidth))}, true
}

// pointLabel names a point on a chart by its load: c=8 or 100/s, and any
// other swept coordinate that tells points of one model apart.
func pointLabel(p *result.Point, others []string) string {
	s := "c=" + strconv.Itoa(p.Concurrency)
	if p.Mode == plan.LoadRequestRate {
		s = numfmt.Significant(p.RequestRate, 4) + "/s"
	}
	for _, k := range others {
		s += " " + k + "=" + p.Coords[k]
	}
	return s
}

// varying are the coordinates other than the load that differ between a
// model's points.
func varying(pts []*result.Point) []string {
	seen := map[string]map[string]bool{}
	for _, p := range pts {
		for k, v := range p.Coords {
			if k == "concurrency" || k == "request_rate" {
				continue
			}
			if seen[k] == nil {
				seen[k] = map[string]bool{}
			}
			seen[k][v] = true
		}
	}
	var out []string
	for k, vs := range seen {
		if len(vs) > 1 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// latencyFigure draws throughput (x) against a latency metric (y, ms) per
// model, each point labelled with its load. Where the baseline gates
// throughput or this metric, a dashed mark runs from the point to the
// bound the gate held it to; where a threshold bounds this metric, a rule
// crosses the plot at it.
func latencyFigure(run *result.Run, v *verdict.Verdict, metric string) (figure, bool, error) {
	info, found := plan.LookupMetric(metric)
	if !found || info.Unit != "us" {
		return figure{}, false, fmt.Errorf("plot: %q is not a latency metric", metric)
	}
	gated := gateChecks(v)
	c := svg.XY{Title: "Throughput vs " + metric + " latency", XLabel: "throughput (" + throughputUnit(run) + ")", YLabel: metric + " latency (ms)", XFromZero: true, YFromZero: true}
	models, byModel := pointsByModel(run)
	marks := map[verdict.Status]bool{}
	for i, model := range models {
		s := svg.Series{Name: model, Color: svg.Color(i), Shape: svg.ShapeOf(i)}
		others := varying(byModel[model])
		for _, pt := range byModel[model] {
			fy, ok := pt.Figure(metric)
			fx, okx := pt.Figure(plan.MetricThroughput)
			if !ok || !okx || fy.Value <= 0 {
				continue
			}
			x, y := fx.Value, fy.Value/1e3
			s.Points = append(s.Points, svg.Point{X: x, Y: y, Label: pointLabel(pt, others)})
			if g, ok := gated[gateKey{pt.ID, plan.MetricThroughput}]; ok {
				c.Marks = append(c.Marks, svg.Mark{X1: x, Y1: y, X2: g.Bound, Y2: y, Color: markColor(g.Status)})
				marks[markStatus(g.Status)] = true
			}
			if g, ok := gated[gateKey{pt.ID, metric}]; ok {
				c.Marks = append(c.Marks, svg.Mark{X1: x, Y1: y, X2: x, Y2: g.Bound / 1e3, Color: markColor(g.Status)})
				marks[markStatus(g.Status)] = true
			}
		}
		if len(s.Points) > 0 {
			c.Series = append(c.Series, s)
		}
	}
	if len(c.Series) == 0 {
		return figure{}, false, nil
	}
	for _, st := range []verdict.Status{verdict.StatusPass, verdict.StatusFail, verdict.StatusInconclusive} {
		if marks[st] {
			c.Legend = append(c.Legend, svg.LegendItem{Text: markLegend[st], Stroke: svg.Stroke{Color: markColor(st), Width: 1.5, Dash: "4 3"}})
		}
	}
	for i, b := range thresholdBounds(v, metric) {
		st := svg.Stroke{Color: svg.ColorFail, Width: 1.5, Dash: []string{"6 3", "2 3", "8 2 2 2"}[i%3]}
		c.Rules = append(c.Rules, svg.Rule{Value: b.value / 1e3, Horizontal: true, Stroke: st})
		c.Legend = append(c.Legend, svg.LegendItem{Text: "threshold " + b.name, Stroke: st})
	}
	caption := "Each point is one sweep point, labelled with its load; its figures are the medians over its kept trials."
	if len(marks) > 0 {
		caption += " For the metrics the baseline gates, a dashed line runs from a point to the bound the gate held it to, ending in a bar at the bound."
	}
	return figure{ID: "latency-" + metric, Heading: "Throughput vs " + metric + " latency", Caption: caption, SVG: html(c.Render(chartWidth, 440))}, true, nil
}

// throughputUnit is infer/s, or req/s for a run of LLM requests.
func throughputUnit(run *result.Run) string {
	if llmRows(run) != nil {
		return "req/s"
	}
	return "infer/s"
}

// markStatus sorts a baseline check into the three kinds of mark: within
// its bound, beyond it, undecided.
func markStatus(s verdict.Status) verdict.Status {
	switch s {
	case verdict.StatusFail, verdict.StatusInconclusive:
		return s
	}
	return verdict.StatusPass
}

func markColor(s verdict.Status) string { return statusColor(markStatus(s)) }

var markLegend = map[verdict.Status]string{
	verdict.StatusPass:         "baseline bound: the point is within it",
	verdict.StatusFail:         "baseline bound: the point failed it",
	verdict.StatusInconclusive: "baseline bound: undecided",
}

type gateKey struct{ point, metric string }

// gateChecks are the baseline checks that held a point to a bound: the
// metrics the baseline actually gates, at the points it gated them.
func gateChecks(v *verdict.Verdict) map[gateKey]verdict.Check {
	out := map[gateKey]verdict.Check{}
	if v == nil {
		return out
	}
	for _, c := range v.Checks {
		if c.Kind == verdict.KindBaseline && !c.NoValue && c.Bound > 0 && c.Point != "" {
			out[gateKey{c.Point, c.Metric}] = c
		}
	}
	return out
}

type namedBound struct {
	name  string
	value float64
}

// thresholdBounds are the distinct bounds thresholds set on metric.
func thresholdBounds(v *verdict.Verdict, metric string) []namedBound {
	if v == nil {
		return nil
	}
	var out []namedBound
	seen := map[float64]bool{}
	for _, c := range v.Checks {
		if c.Kind != verdict.KindThreshold || c.Metric != metric || c.Op == "" || seen[c.Bound] {
			continue
		}
		seen[c.Bound] = true
		out = append(out, namedBound{name: c.Metric + " " + c.Op + " " + numfmt.Value(c.Bound, c.Unit), value: c.Bound})
	}
	return out
}

// windowFigures draw, for each point, its throughput and latency in every
// measured window in order, stabilization windows hollow on a shaded
// ground and kept trials filled: drift and warm-up show at a glance.
func windowFigures(run *result.Run) []figure {
	var out []figure
	for i := range run.Points {
		p := &run.Points[i]
		if len(p.Windows) < 2 {
			continue
		}
		color := svg.Color(modelIndex(run, p.Model))
		tp := svg.Series{Color: color, Shape: svg.Circle}
		lat := svg.Series{Color: color, Shape: svg.Circle}
		lastWarm := 0
		for j, w := range p.Windows {
			n := float64(j + 1)
			tp.Points = append(tp.Points, svg.Point{X: n, Y: w.Throughput, Hollow: !w.Kept})
			lat.Points = append(lat.Points, svg.Point{X: n, Y: w.LatencyUs / 1e3, Hollow: !w.Kept})
			if !w.Kept && lastWarm == j {
				lastWarm = j + 1
			}
		}
		var spans []svg.Span
		if lastWarm > 0 {
			spans = []svg.Span{{X1: 0.5, X2: float64(lastWarm) + 0.5, Fill: "#f6f8fa"}}
		}
		name := windowLatencyName(p)
		left := &svg.XY{Title: p.ID + ": throughput per window", XLabel: "window", YLabel: "throughput (" + throughputUnit(run) + ")",
			Series: []svg.Series{tp}, Spans: spans, YFromZero: true, XInteger: true, NoLegend: true}
		legend := []svg.LegendItem{{Text: "kept trial", HasMarker: true, Color: color}}
		if lastWarm > 0 {
			legend = append(legend, svg.LegendItem{Text: "not kept (stabilizing)", HasMarker: true, Color: color, Hollow: true},
				svg.LegendItem{Text: "before the kept trials", Fill: "#f6f8fa", Stroke: svg.Stroke{Color: "#d0d7de"}})
		}
		right := &svg.XY{Title: p.ID + ": " + name + " per window", XLabel: "window", YLabel: name + " (ms)",
			Series: []svg.Series{lat}, Spans: spans, YFromZero: true, XInteger: true, Legend: legend}
		out = append(out, figure{ID: "windows-" + p.ID, SVG: html(svg.Panels(p.ID+": per-window throughput and latency", chartWidth/2, 260, left, right))})
	}
	return out
}

// windowLatencyName names the latency a point's windows carry (the
// stability metric): the kept trials' figure it equals, else "latency".
func windowLatencyName(p *result.Point) string {
	var kept *result.Window
	for j := range p.Windows {
		if p.Windows[j].Kept {
			kept = &p.Windows[j]
			break
		}
	}
	if kept == nil || len(p.Trials) == 0 {
		return "latency"
	}
	m := p.Trials[0].Metrics
	for _, c := range []struct {
		name string
		v    float64
	}{{"p50 latency", m.P50Us}, {"p90 latency", m.P90Us}, {"p95 latency", m.P95Us}, {"p99 latency", m.P99Us}, {"average latency", m.LatencyAvgUs}} {
		if c.v > 0 && math.Abs(c.v-kept.LatencyUs) <= 1e-6*c.v {
			return c.name
		}
	}
	return "latency"
}

func modelIndex(run *result.Run, model string) int {
	models, _ := pointsByModel(run)
	for i, m := range models {
		if m == model {
			return i
		}
	}
	return 0
}

// breakdownFigure stacks the server-side latency components per point.
func breakdownFigure(run *result.Run) (figure, bool) {
	b := svg.Bars{Title: "Server-side latency per request", XLabel: "ms per request",
		Parts:  []string{"queue", "compute input", "compute infer", "compute output"},
		Colors: []string{svg.Color(4), svg.Color(5), svg.Color(0), svg.Color(2)},
		Total:  func(ms float64) string { return numfmt.Micros(ms * 1e3) }}
	for i := range run.Points {
		s := run.Points[i].FigureMetrics().Server
		if s == nil || s.Reset {
			continue
		}
		b.Names = append(b.Names, run.Points[i].ID)
		b.Values = append(b.Values, []float64{s.QueueUs / 1e3, s.ComputeInputUs / 1e3, s.ComputeInferUs / 1e3, s.ComputeOutputUs / 1e3})
	}
	if len(b.Names) == 0 {
		return figure{}, false
	}
	return figure{ID: "server", Heading: "Server-side latency breakdown",
		Caption: "The server's own statistics over the kept trials, averaged per request: time queued and computing.",
		SVG:     html(b.Render(chartWidth))}, true
}

func pointsByModel(run *result.Run) ([]string, map[string][]*result.Point) {
	var models []string
	by := map[string][]*result.Point{}
	for i := range run.Points {
		p := &run.Points[i]
		if _, ok := by[p.Model]; !ok {
			models = append(models, p.Model)
		}
		by[p.Model] = append(by[p.Model], p)
	}
	for _, m := range models {
		pts := by[m]
		sort.SliceStable(pts, func(i, j int) bool {
			if pts[i].Mode == plan.LoadRequestRate {
				return pts[i].RequestRate < pts[j].RequestRate
			}
			return pts[i].Concurrency < pts[j].Concurrency
		})
	}
	return models, by
}

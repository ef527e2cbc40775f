package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/report/svg"
	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// svgsOf cuts the inline <svg> elements out of a page.
func svgsOf(page string) []string {
	var out []string
	for {
		i := strings.Index(page, "<svg")
		if i < 0 {
			return out
		}
		j := strings.Index(page[i:], "</svg>")
		out = append(out, page[i:i+j+len("</svg>")])
		page = page[i+j:]
	}
}

// drawn is what checkSVG read from one chart.
type drawn struct {
	view       svg.Box
	texts      []drawnText
	plotAreas  []svg.Box
	legends    []svg.Box
	points     []drawnPoint
	marks      int
	bounds     int
	intervals  int
	hollow     int
	rowsLabels []string
}

type drawnText struct {
	s, class, axis string
	box            svg.Box
}

type drawnPoint struct {
	label, text string
}

var rotate = regexp.MustCompile(`rotate\((-?[\d.]+)`)

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func fattr(se xml.StartElement, name string) float64 {
	v, _ := strconv.ParseFloat(attr(se, name), 64)
	return v
}

// readSVG parses a chart into the boxes a reader sees, estimating every
// text's extent with the metrics the layout used.
func readSVG(doc string) (drawn, error) {
	var d drawn
	dec := xml.NewDecoder(strings.NewReader(doc))
	var groups []xml.StartElement
	var point *drawnPoint
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return d, fmt.Errorf("not well-formed SVG: %w", err)
		}
		switch se := tok.(type) {
		case xml.StartElement:
			class := attr(se, "class")
			switch se.Name.Local {
			case "svg":
				f := strings.Fields(attr(se, "viewBox"))
				if len(f) != 4 {
					return d, fmt.Errorf("viewBox %q", attr(se, "viewBox"))
				}
				w, _ := strconv.ParseFloat(f[2], 64)
				h, _ := strconv.ParseFloat(f[3], 64)
				d.view = svg.Box{W: w, H: h}
			case "g":
				groups = append(groups, se)
				if class == "point" {
					d.points = append(d.points, drawnPoint{label: attr(se, "data-label")})
					point = &d.points[len(d.points)-1]
				}
				if class == "row" {
					d.rowsLabels = append(d.rowsLabels, attr(se, "data-label"))
				}
			case "rect":
				b := svg.Box{X: fattr(se, "x"), Y: fattr(se, "y"), W: fattr(se, "width"), H: fattr(se, "height")}
				switch class {
				case "plot-area":
					d.plotAreas = append(d.plotAreas, b)
				case "legend-box":
					d.legends = append(d.legends, b)
				}
			case "line":
				switch class {
				case "mark":
					d.marks++
				case "bound":
					d.bounds++
				case "interval":
					d.intervals++
				}
			case "text":
				var s string
				if err := dec.DecodeElement(&s, &se); err != nil {
					return d, err
				}
				x, y, size := fattr(se, "x"), fattr(se, "y"), fattr(se, "font-size")
				anchor := attr(se, "text-anchor")
				b := svg.TextBox(x, y, s, size, anchor)
				if m := rotate.FindStringSubmatch(attr(se, "transform")); m != nil {
					if m[1] != "-90" {
						return d, fmt.Errorf("text %q rotated by %s: only -90 is laid out", s, m[1])
					}
					b = svg.RotatedTextBox(x, y, s, size, anchor)
				}
				axis := ""
				if len(groups) > 0 {
					axis = attr(groups[len(groups)-1], "class")
				}
				d.texts = append(d.texts, drawnText{s: s, class: attr(se, "class"), axis: axis, box: b})
				if point != nil && attr(se, "class") == "point-label" {
					point.text = s
				}
			}
			if (se.Name.Local == "circle" || se.Name.Local == "rect" || se.Name.Local == "polygon") && attr(se, "class") == "marker" && attr(se, "fill") == "#ffffff" {
				d.hollow++
			}
		case xml.EndElement:
			if se.Name.Local == "g" {
				if attr(groups[len(groups)-1], "class") == "point" {
					point = nil
				}
				groups = groups[:len(groups)-1]
			}
		}
	}
	return d, nil
}

// checkSVG holds a chart to what a reader needs: no text leaves the
// drawing, no legend covers a plot area, every labelled point carries its
// label, no two point labels or two tick labels of one axis collide, and
// point labels stay inside a plot area.
func checkSVG(t *testing.T, name, doc string) drawn {
	t.Helper()
	d, problems := svgProblems(doc)
	for _, p := range problems {
		t.Errorf("%s: %s", name, p)
	}
	return d
}

// svgProblems lists what checkSVG objects to in doc.
func svgProblems(doc string) (drawn, []string) {
	d, err := readSVG(doc)
	if err != nil {
		return d, []string{err.Error()}
	}
	var out []string
	errorf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, tx := range d.texts {
		if !tx.box.Inside(d.view) {
			errorf("text %q at %+v leaves the viewBox %+v", tx.s, tx.box, d.view)
		}
	}
	for _, l := range d.legends {
		for _, p := range d.plotAreas {
			if l.Overlaps(p) {
				errorf("legend %+v covers the plot area %+v", l, p)
			}
		}
	}
	for _, p := range d.points {
		if p.label != "" && p.text != p.label {
			errorf("point %q labelled %q", p.label, p.text)
		}
	}
	var labels []svg.Box
	byAxis := map[string][]drawnText{}
	for _, tx := range d.texts {
		switch tx.class {
		case "point-label":
			inPlot := false
			for _, p := range d.plotAreas {
				inPlot = inPlot || tx.box.Inside(p)
			}
			if !inPlot {
				errorf("point label %q at %+v is outside every plot area", tx.s, tx.box)
			}
			for _, o := range labels {
				if tx.box.Overlaps(o) {
					errorf("point label %q overlaps another", tx.s)
				}
			}
			labels = append(labels, tx.box)
		case "tick":
			byAxis[tx.axis] = append(byAxis[tx.axis], tx)
		}
	}
	for axis, ticks := range byAxis {
		for i := 1; i < len(ticks); i++ {
			for j := 0; j < i; j++ {
				if ticks[i].box.Overlaps(ticks[j].box) && axis != "" {
					errorf("tick labels %q and %q collide", ticks[i].s, ticks[j].s)
				}
			}
		}
	}
	return d, out
}

// sweepRun is two models swept over five concurrencies, throughput
// reaching 3990 infer/s (the axis must run past it, labelled), every
// point with windows, two of them not kept.
func sweepRun() *result.Run {
	run := &result.Run{Scenario: "sweep", Source: "perfscen", Status: result.StatusComplete}
	for mi, model := range []string{"reference", "optimized"} {
		for ci, c := range []int{1, 2, 4, 8, 16} {
			tp := []float64{480, 900, 1650, 2700, 3200}[ci] * (1 + 0.25*float64(mi))
			if mi == 1 && c == 16 {
				tp = 3990
			}
			lat := float64(c) * 1e6 / tp
			p := result.Point{ID: fmt.Sprintf("%s/c=%d", model, c), Model: model, ModelName: model, Mode: plan.LoadConcurrency, Concurrency: c,
				Status: result.PointStable, Protocol: "grpc", BatchSize: 1, Coords: map[string]string{"concurrency": strconv.Itoa(c)}}
			p.Summary = result.Metrics{Throughput: tp, Requests: 1000, P50Us: lat * 0.8, P95Us: lat, P99Us: lat * 1.4, LatencyAvgUs: lat * 0.85,
				Server: &result.ServerStats{QueueUs: lat * 0.3, ComputeInferUs: lat * 0.5, ComputeInputUs: 20, ComputeOutputUs: 15}}
			for w := 0; w < 12; w++ {
				f := 1 + 0.05*math.Sin(float64(w+ci))
				p.Windows = append(p.Windows, result.Window{Index: w, Throughput: tp * f, LatencyUs: lat / f, Kept: w >= 2})
			}
			run.Points = append(run.Points, p)
		}
	}
	return run
}

func TestLatencyChartIsReadable(t *testing.T) {
	run := sweepRun()
	// The baseline gates throughput and p99 at two points; the chart plots
	// p95, so only the throughput bounds are drawn.
	v := &verdict.Verdict{Checks: []verdict.Check{
		{Kind: verdict.KindBaseline, Name: "throughput vs baseline", Point: "optimized/c=16", Metric: plan.MetricThroughput, Unit: "infer/s",
			Value: 3990, Bound: 3500, Op: ">=", Center: 3900, Status: verdict.StatusPass},
		{Kind: verdict.KindBaseline, Name: "throughput vs baseline", Point: "reference/c=4", Metric: plan.MetricThroughput, Unit: "infer/s",
			Value: 1650, Bound: 1700, Op: ">=", Center: 1800, Status: verdict.StatusFail},
		{Kind: verdict.KindBaseline, Name: "p99 vs baseline", Point: "reference/c=4", Metric: plan.MetricP99, Unit: "us",
			Value: 3400, Bound: 3000, Op: "<=", Center: 2900, Status: verdict.StatusFail},
		{Kind: verdict.KindThreshold, Name: "p95 < 6ms", Point: "reference/c=4", Metric: plan.MetricP95, Unit: "us", Value: 2400, Bound: 6000, Op: "<", Status: verdict.StatusPass},
	}}
	f, ok, err := latencyFigure(run, v, plan.MetricP95)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	d := checkSVG(t, "throughput vs p95", string(f.SVG))
	if len(d.points) != 10 {
		t.Errorf("%d points drawn, want 10", len(d.points))
	}
	for _, p := range d.points {
		if !strings.HasPrefix(p.label, "c=") {
			t.Errorf("point labelled %q, want its concurrency", p.label)
		}
	}
	// Each mark is a dashed segment and its cap.
	if d.marks != 2 {
		t.Errorf("%d baseline marks, want the 2 throughput bounds (p99 is not plotted, p95 not gated)", d.marks)
	}
	var ticks []string
	for _, tx := range d.texts {
		if tx.class == "tick" && tx.axis == "axis x" {
			ticks = append(ticks, tx.s)
		}
	}
	// The axis ends at a tick past the largest throughput, labelled in
	// full (checkSVG: inside the drawing).
	if last, _ := strconv.ParseFloat(ticks[len(ticks)-1], 64); last < 3990 || !slices.Contains(ticks, "4000") {
		t.Errorf("x ticks %v: want 4000 and a last one past 3990", ticks)
	}
	if !strings.Contains(string(f.SVG), "threshold p95 &lt; 6.00ms") {
		t.Error("the p95 threshold is not in the legend")
	}
	// A p99 chart shows the p99 gate's bound too.
	f, _, _ = latencyFigure(run, v, plan.MetricP99)
	if d := checkSVG(t, "throughput vs p99", string(f.SVG)); d.marks != 3 {
		t.Errorf("%d marks on the p99 chart, want 3", d.marks)
	}
}

func TestComparisonChart(t *testing.T) {
	cmp := func(name string, st verdict.Status, value, lo, hi, bound float64, op string) verdict.Check {
		return verdict.Check{Kind: verdict.KindComparison, Name: name, Point: "cand/c=1", RefPoint: "ref/c=1", Unit: "ratio",
			Value: value, Lo: lo, Hi: hi, Bound: bound, Op: op, Confidence: 0.95, P: 0.004, Status: st}
	}
	v := &verdict.Verdict{Checks: []verdict.Check{
		cmp("faster >= 1.15", verdict.StatusPass, 1.4, 1.3, 1.52, 1.15, ">="),
		cmp("latency <= 0.9", verdict.StatusInconclusive, 0.62, 0.443, 0.887, 0.9, "<="),
		cmp("goodput >= 0.9", verdict.StatusFail, 0.7, 0.6, 0.8, 0.9, ">="),
		{Kind: verdict.KindComparison, Name: "not measured", Point: "cand/c=2", NoValue: true, Status: verdict.StatusFail},
		{Kind: verdict.KindThreshold, Name: "errors == 0", Status: verdict.StatusPass},
	}}
	f, ok := comparisonFigure(v)
	if !ok {
		t.Fatal("no comparison chart")
	}
	d := checkSVG(t, "comparisons", string(f.SVG))
	if len(d.rowsLabels) != 3 || d.bounds != 3 || d.intervals != 3 {
		t.Errorf("rows %q, %d bounds, %d intervals; want the 3 measured comparisons each with its bound and interval", d.rowsLabels, d.bounds, d.intervals)
	}
	for _, want := range []string{"inconclusive", "FAIL", "ratio 0.620, 95% [0.443, 0.887], p = 0.004", "cand/c=1 vs ref/c=1"} {
		if !strings.Contains(string(f.SVG), want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if _, ok := comparisonFigure(&verdict.Verdict{}); ok {
		t.Error("a chart without comparisons")
	}
}

func TestWindowCharts(t *testing.T) {
	run := sweepRun()
	figs := windowFigures(run)
	if len(figs) != len(run.Points) {
		t.Fatalf("%d window charts for %d points", len(figs), len(run.Points))
	}
	d := checkSVG(t, "windows", string(figs[0].SVG))
	if d.hollow != 4 {
		t.Errorf("%d hollow markers, want the 2 unkept windows in both panels", d.hollow)
	}
	if len(d.plotAreas) != 2 || len(d.legends) != 1 {
		t.Errorf("%d panels, %d legends; want 2 and 1", len(d.plotAreas), len(d.legends))
	}
}

func TestBreakdownChart(t *testing.T) {
	f, ok := breakdownFigure(sweepRun())
	if !ok {
		t.Fatal("no breakdown")
	}
	checkSVG(t, "breakdown", string(f.SVG))
}

// Every chart of a sweep, an LLM run and the fixture passes checkSVG in
// the page the report writes.
func TestHTMLChartsReadable(t *testing.T) {
	fixRun, fixV := fixture(t)
	for name, c := range map[string]struct {
		run *result.Run
		v   *verdict.Verdict
	}{"sweep": {sweepRun(), nil}, "llm": {llmRun(), nil}, "llm sweep": {llmSweepRun(), nil}, "fixture": {fixRun, fixV}} {
		var b bytes.Buffer
		if err := HTML(&b, c.run, c.v, Options{}); err != nil {
			t.Fatal(err)
		}
		for i, s := range svgsOf(b.String()) {
			checkSVG(t, fmt.Sprintf("%s chart %d", name, i+1), s)
		}
	}
}

// The checker itself finds what it exists for.
func TestSVGProblemsFound(t *testing.T) {
	bad := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100">
<rect x="20" y="10" width="150" height="70" class="plot-area"/>
<g class="legend"><rect x="150" y="10" width="40" height="20" class="legend-box"/></g>
<g class="axis x"><text x="20" y="95" font-size="11" class="tick">0</text><text x="195" y="95" font-size="11" text-anchor="middle" class="tick">4000</text></g>
<g class="point" data-label="c=1"><circle cx="50" cy="50" r="4" class="marker"/></g>
<g class="point" data-label="c=2"><circle cx="60" cy="50" r="4" class="marker"/><text x="64" y="46" font-size="11" class="point-label">c=2</text></g>
<g class="point" data-label="c=4"><circle cx="62" cy="52" r="4" class="marker"/><text x="64" y="46" font-size="11" class="point-label">c=4</text></g>
</svg>`
	_, problems := svgProblems(bad)
	for _, want := range []string{`text "4000"`, "legend", `point "c=1" labelled ""`, `point label "c=4" overlaps`} {
		found := false
		for _, p := range problems {
			found = found || strings.Contains(p, want)
		}
		if !found {
			t.Errorf("no problem mentions %q: %q", want, problems)
		}
	}
}

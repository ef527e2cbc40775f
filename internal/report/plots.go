package report

import (
	"bytes"
	"fmt"
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// latencyPlot draws throughput (x) against the chosen latency metric (y,
// ms) per model across its sweep points, with the baseline's throughput
// band behind each model's curve. ok is false when nothing is plottable.
func latencyPlot(run *result.Run, metric string, bands []Band) (svg []byte, ok bool, err error) {
	p, ok, err := newLatencyPlot(run, metric, bands)
	if !ok || err != nil {
		return nil, false, err
	}
	b, err := svgOf(p, 8*vg.Inch, 4.5*vg.Inch)
	return b, err == nil, err
}

func newLatencyPlot(run *result.Run, metric string, bands []Band) (*plot.Plot, bool, error) {
	info, found := plan.LookupMetric(metric)
	if !found || info.Unit != "us" {
		return nil, false, fmt.Errorf("plot: %q is not a latency metric", metric)
	}
	bandOf := map[string]Band{}
	for _, b := range bands {
		bandOf[b.Point] = b
	}
	p := plot.New()
	p.Title.Text = "Throughput vs " + metric + " latency"
	p.X.Label.Text = "throughput (infer/s)"
	p.Y.Label.Text = metric + " latency (ms)"
	p.Legend.Top = true
	p.Legend.Left = true
	models, byModel := pointsByModel(run)
	plotted := false
	for i, model := range models {
		var xys, lo, hi plotter.XYs
		for _, pt := range byModel[model] {
			fy, ok := pt.Figure(metric)
			if !ok {
				continue
			}
			y := fy.Value / 1e3
			fx, _ := pt.Figure(plan.MetricThroughput)
			xys = append(xys, plotter.XY{X: fx.Value, Y: y})
			if b, ok := bandOf[pt.ID]; ok {
				lo = append(lo, plotter.XY{X: b.Lo, Y: y})
				hi = append(hi, plotter.XY{X: b.Hi, Y: y})
			}
		}
		if len(xys) == 0 {
			continue
		}
		c := plotutil.Color(i)
		if err := addBand(p, model, c, lo, hi); err != nil {
			return nil, false, err
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, false, fmt.Errorf("plot: %w", err)
		}
		line.Color, points.Color = c, c
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(model, line, points)
		plotted = true
	}
	return p, plotted, nil
}

// addBand draws the baseline's throughput range at each point's latency:
// a shaded ribbon between the lo and hi edges, and error bars so a single
// point's band shows too.
func addBand(p *plot.Plot, model string, c color.Color, lo, hi plotter.XYs) error {
	if len(lo) == 0 {
		return nil
	}
	if len(lo) >= 2 {
		ribbon := append(plotter.XYs{}, lo...)
		for j := len(hi) - 1; j >= 0; j-- {
			ribbon = append(ribbon, hi[j])
		}
		poly, err := plotter.NewPolygon(ribbon)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		poly.Color = translucent(c)
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	centres := make(plotter.XYs, len(lo))
	errs := make(plotter.XErrors, len(lo))
	for j := range lo {
		mid := (lo[j].X + hi[j].X) / 2
		centres[j] = plotter.XY{X: mid, Y: lo[j].Y}
		errs[j].Low, errs[j].High = mid-lo[j].X, hi[j].X-mid
	}
	eb, err := plotter.NewXErrorBars(xErrs{centres, errs})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	eb.Color = c
	p.Add(eb)
	// Error bars have no legend swatch; a bare polygon style draws one.
	p.Legend.Add(model+" baseline gate (fails left of the band)", &plotter.Polygon{Color: translucent(c), LineStyle: eb.LineStyle})
	return nil
}

// xErrs pairs band centres with their half-widths for XErrorBars.
type xErrs struct {
	plotter.XYs
	plotter.XErrors
}

// breakdownPlot stacks the server-side latency components per sweep point.
func breakdownPlot(run *result.Run) (svg []byte, ok bool, err error) {
	p, n, err := newBreakdownPlot(run)
	if n == 0 || err != nil {
		return nil, false, err
	}
	b, err := svgOf(p, vg.Length(max(6, min(16, float64(n)*0.8)))*vg.Inch, 4.5*vg.Inch)
	return b, err == nil, err
}

// newBreakdownPlot returns the plot and how many points it shows.
func newBreakdownPlot(run *result.Run) (*plot.Plot, int, error) {
	var names []string
	var parts [4]plotter.Values
	for i := range run.Points {
		s := run.Points[i].FigureMetrics().Server
		if s == nil || s.Reset {
			continue
		}
		names = append(names, run.Points[i].ID)
		for j, v := range []float64{s.QueueUs, s.ComputeInputUs, s.ComputeInferUs, s.ComputeOutputUs} {
			parts[j] = append(parts[j], v/1e3)
		}
	}
	if len(names) == 0 {
		return nil, 0, nil
	}
	p := plot.New()
	p.Title.Text = "Server-side latency breakdown"
	p.Y.Label.Text = "ms per request"
	p.Legend.Top = true
	width := vg.Points(max(8, min(40, 400/float64(len(names)))))
	var below *plotter.BarChart
	for j, label := range []string{"queue", "compute input", "compute infer", "compute output"} {
		bars, err := plotter.NewBarChart(parts[j], width)
		if err != nil {
			return nil, 0, fmt.Errorf("plot: %w", err)
		}
		bars.Color = plotutil.Color(j)
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(label, bars)
	}
	p.NominalX(names...)
	// Half a slot of room on each side keeps the outer bars whole, and
	// headroom above the tallest stack keeps the legend off the bars.
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.Y.Min = 0
	p.Y.Max *= 1.35
	p.X.Tick.Label.Rotation = 0.6
	p.X.Tick.Label.XAlign = -1
	return p, len(names), nil
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

func translucent(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x40}
}

// svgOf renders p as an SVG element for inlining (no XML prolog).
func svgOf(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	wt, err := p.WriterTo(w, h, "svg")
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	b := buf.Bytes()
	if i := bytes.Index(b, []byte("<svg")); i > 0 {
		b = b[i:]
	}
	return b, nil
}

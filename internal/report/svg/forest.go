package svg

import "math"

// Forest draws one row per interval estimate against its bound: the
// interval as a bar with caps, the estimate as a diamond, the bound as a
// dashed line with the side that fails shaded, and a reference line (no
// change) across all rows. Names sit left of the plot, outcomes right of
// it, the legend below: nothing covers the data.
type Forest struct {
	Title, XLabel string
	Rows          []Row
	// Ref draws a reference line at this x across every row (0: none).
	Ref    float64
	Legend []LegendItem
}

// Row is one estimate.
type Row struct {
	Label, Sub string
	Value      float64
	// Lo and Hi bound Value when HasInterval.
	Lo, Hi      float64
	HasInterval bool
	// Bound and Op: the estimate passes when it is Op Bound (">=", "<=");
	// no bound when Op is "".
	Bound float64
	Op    string
	Color string
	// Note and Detail are the right column's two lines: the outcome and
	// the figures.
	Note, Detail string
}

const (
	rowH      = 46.0
	forestTop = titleSize + 18
)

// Render draws the chart w px wide; its height follows from its rows.
func (f *Forest) Render(w float64) []byte {
	var d Doc
	leftW, rightW := 0.0, 0.0
	for _, r := range f.Rows {
		leftW = math.Max(leftW, math.Max(TextWidth(r.Label, labelSize), TextWidth(r.Sub, tickSize)))
		rightW = math.Max(rightW, math.Max(TextWidth(r.Note, labelSize), TextWidth(r.Detail, tickSize)))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	add := func(v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, r := range f.Rows {
		add(r.Value)
		if r.HasInterval {
			add(r.Lo)
			add(r.Hi)
		}
		if r.Op != "" {
			add(r.Bound)
		}
	}
	if f.Ref != 0 {
		add(f.Ref)
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	pl, ph := padded(lo, hi)
	xa := NiceAxis(pl, ph, 6)
	if lo > 0 && hi/lo > 4 {
		// Ratios far apart: on a log scale a halving and a doubling look
		// alike, and 0.2 is not crushed against 0.
		xa = LogAxis(lo/1.08, hi*1.08)
	}
	xt := xa.Ticks()
	first := TextWidth(xa.Label(xt[0]), tickSize) / 2
	last := TextWidth(xa.Label(xt[len(xt)-1]), tickSize) / 2
	plot := Box{X: 12 + leftW + 16 + first, Y: forestTop, H: float64(len(f.Rows)) * rowH}
	plot.W = w - plot.X - math.Max(rightW+16, last) - 12
	sx := func(v float64) float64 { return xa.Scale(v, plot.X, plot.Right()) }
	lines := legendLines(f.Legend, w-24)
	h := plot.Bottom() + 4 + tickSize + 8 + labelSize + 12 + float64(len(lines))*legendRow + 8

	d.Open("chart forest")
	d.Text(12, titleSize+2, f.Title, TextStyle{Size: titleSize, Weight: "600", Color: colorText, Class: "title"})
	d.Rect(plot, "#ffffff", Stroke{Color: colorAxis}, "plot-area")
	for _, v := range xt {
		x := sx(v)
		if v != xa.Min && v != xa.Max {
			d.Line(x, plot.Y, x, plot.Bottom(), Stroke{Color: colorGrid}, "grid")
		}
		d.Line(x, plot.Bottom(), x, plot.Bottom()+4, Stroke{Color: colorAxis}, "")
		d.Text(x, plot.Bottom()+4+tickSize, xa.Label(v), TextStyle{Size: tickSize, Anchor: "middle", Color: colorMuted, Class: "tick"})
	}
	d.Text(plot.X+plot.W/2, plot.Bottom()+4+tickSize+8+labelSize, f.XLabel, TextStyle{Size: labelSize, Anchor: "middle", Color: colorText, Class: "axis-label"})
	// The failing sides first, so the reference line and the data stay
	// above them.
	for i, r := range f.Rows {
		top := plot.Y + float64(i)*rowH
		if i > 0 {
			d.Line(plot.X, top, plot.Right(), top, Stroke{Color: colorGrid}, "")
		}
		if r.Op != "" {
			b := sx(r.Bound)
			fail := Box{X: plot.X, Y: top + 1, W: b - plot.X, H: rowH - 2}
			if r.Op == "<=" || r.Op == "<" {
				fail = Box{X: b, Y: top + 1, W: plot.Right() - b, H: rowH - 2}
			}
			if fail.W > 0 {
				d.Rect(fail, "#ffebe9", Stroke{}, "fail-side")
			}
		}
	}
	if f.Ref != 0 {
		d.Line(sx(f.Ref), plot.Y, sx(f.Ref), plot.Bottom(), Stroke{Color: colorAxis, Width: 1.5}, "rule")
	}
	for i, r := range f.Rows {
		top := plot.Y + float64(i)*rowH
		cy := top + rowH/2
		d.Open("row", "data-label", r.Label)
		if r.Op != "" {
			b := sx(r.Bound)
			d.Line(b, top+3, b, top+rowH-3, Stroke{Color: ColorFail, Width: 2, Dash: "5 3"}, "bound")
		}
		if r.HasInterval {
			a, b := sx(r.Lo), sx(r.Hi)
			d.Line(a, cy, b, cy, Stroke{Color: r.Color, Width: 3}, "interval")
			d.Line(a, cy-7, a, cy+7, Stroke{Color: r.Color, Width: 2}, "")
			d.Line(b, cy-7, b, cy+7, Stroke{Color: r.Color, Width: 2}, "")
		}
		d.Marker(Diamond, sx(r.Value), cy, 5, r.Color, false, "marker")
		d.Text(plot.X-16-first, top+19, r.Label, TextStyle{Size: labelSize, Anchor: "end", Color: colorText, Class: "row-label"})
		d.Text(plot.X-16-first, top+34, r.Sub, TextStyle{Size: tickSize, Anchor: "end", Color: colorMuted, Class: "row-label"})
		d.Text(plot.Right()+16, top+19, r.Note, TextStyle{Size: labelSize, Weight: "600", Color: r.Color, Class: "row-note"})
		d.Text(plot.Right()+16, top+34, r.Detail, TextStyle{Size: tickSize, Color: colorMuted, Class: "row-note"})
		d.Close()
	}
	if len(lines) > 0 {
		d.legendRows(12, h-8-float64(len(lines))*legendRow, lines)
	}
	d.Close()
	return d.SVG(w, h, f.Title)
}

// legendLines breaks items into rows no wider than w.
func legendLines(items []LegendItem, w float64) [][]LegendItem {
	var out [][]LegendItem
	var line []LegendItem
	used := legendPad
	for _, it := range items {
		iw := itemWidth(it)
		if len(line) > 0 && used+iw > w {
			out, line, used = append(out, line), nil, legendPad
		}
		line = append(line, it)
		used += iw
	}
	if len(line) > 0 {
		out = append(out, line)
	}
	return out
}

func itemWidth(it LegendItem) float64 {
	return legendSwatch + legendPad + TextWidth(it.Text, legendSize) + 2*legendPad
}

// legendRows draws a legend laid out in rows, framed, from (x, y).
func (d *Doc) legendRows(x, y float64, lines [][]LegendItem) Box {
	w := 0.0
	for _, l := range lines {
		lw := legendPad
		for _, it := range l {
			lw += itemWidth(it)
		}
		w = math.Max(w, lw)
	}
	box := Box{X: x, Y: y, W: w, H: float64(len(lines)) * legendRow}
	d.Open("legend")
	d.Rect(box, "#ffffff", Stroke{Color: "#d0d7de"}, "legend-box")
	for i, l := range lines {
		cy := y + float64(i)*legendRow + legendRow/2
		sx := x + legendPad
		for _, it := range l {
			d.swatch(sx, cy, it)
			d.Text(sx+legendSwatch+legendPad, cy+legendSize*0.35, it.Text, TextStyle{Size: legendSize, Color: colorText})
			sx += itemWidth(it)
		}
	}
	d.Close()
	return box
}

// swatch draws an item's sample, legendSwatch wide, centred on cy.
func (d *Doc) swatch(sx, cy float64, it LegendItem) {
	switch {
	case it.Fill != "":
		d.Rect(Box{X: sx, Y: cy - 6, W: legendSwatch, H: 12}, it.Fill, it.Stroke, "")
		if it.Stroke.Color != "" && it.Stroke.Dash != "" {
			// A bound: its line through the shaded side.
			d.Line(sx+legendSwatch, cy-8, sx+legendSwatch, cy+8, it.Stroke, "")
		}
	case it.Stroke.Color != "":
		d.Line(sx, cy, sx+legendSwatch, cy, it.Stroke, "")
	}
	if it.HasMarker {
		d.Marker(it.Shape, sx+legendSwatch/2, cy, 4, it.Color, it.Hollow, "")
	}
}

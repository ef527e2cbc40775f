package svg

import (
	"math"
)

// XY is a scatter/line chart: series of labelled points on linear axes,
// with optional gate marks, reference rules and shaded x ranges behind
// the data, and the legend to the right of the plot area.
type XY struct {
	Title, XLabel, YLabel string
	Series                []Series
	// Marks are segments from a point to a bound, capped at the bound:
	// "this point fails beyond here".
	Marks []Mark
	// Rules are lines across the whole plot at a value of one axis.
	Rules []Rule
	// Spans shade x ranges (e.g. windows that were not kept).
	Spans []Span
	// XFromZero and YFromZero keep 0 on the axis, so distances read as
	// proportions: two builds 3% apart look 3% apart.
	XFromZero, YFromZero bool
	// XInteger ticks the x axis at whole numbers only.
	XInteger bool
	// Extra legend entries after the series' (marks, rules, spans).
	Legend []LegendItem
	// NoLegend leaves the legend out (a panel beside one that has it).
	NoLegend bool
}

// Series is one line of points.
type Series struct {
	Name   string
	Color  string
	Shape  Shape
	Points []Point
	// NoLine draws the markers alone.
	NoLine bool
	Dash   string
}

// Point is one datum; Label is set beside its marker.
type Point struct {
	X, Y   float64
	Label  string
	Hollow bool
}

// Mark is a segment from (X1, Y1) to (X2, Y2) with a cap across its end.
type Mark struct {
	X1, Y1, X2, Y2 float64
	Color          string
}

// Rule is a line across the plot at Value on the y axis (Horizontal) or
// the x axis.
type Rule struct {
	Value      float64
	Horizontal bool
	Stroke     Stroke
}

// Span shades the x range [X1, X2].
type Span struct {
	X1, X2 float64
	Fill   string
}

const (
	titleSize = 14.0
	labelSize = 12.0
	tickSize  = 11.0
	pointSize = 11.0
	markerR   = 4.0
)

// Render draws the chart alone, w px wide and h px tall (taller when its
// legend needs it).
func (c *XY) Render(w, h float64) []byte {
	var d Doc
	h = math.Max(h, c.MinHeight())
	c.Draw(&d, Box{W: w, H: h})
	return d.SVG(w, h, c.Title)
}

// MinHeight is the least height that fits the chart's legend beside the
// plot.
func (c *XY) MinHeight() float64 {
	if c.NoLegend {
		return 0
	}
	_, lh := legendExtent(c.legendItems())
	return lh + titleSize + 16 + 8
}

func (c *XY) legendItems() []LegendItem {
	var items []LegendItem
	for _, s := range c.Series {
		if s.Name == "" {
			continue
		}
		it := LegendItem{Text: s.Name, HasMarker: true, Shape: s.Shape, Color: s.Color}
		if !s.NoLine {
			it.Stroke = Stroke{Color: s.Color, Width: 2, Dash: s.Dash}
		}
		items = append(items, it)
	}
	return append(items, c.Legend...)
}

// extent is the data's range on both axes, marks and rules included.
func (c *XY) extent() (x0, x1, y0, y1 float64) {
	x0, y0 = math.Inf(1), math.Inf(1)
	x1, y1 = math.Inf(-1), math.Inf(-1)
	addX := func(v float64) { x0, x1 = math.Min(x0, v), math.Max(x1, v) }
	addY := func(v float64) { y0, y1 = math.Min(y0, v), math.Max(y1, v) }
	for _, s := range c.Series {
		for _, p := range s.Points {
			addX(p.X)
			addY(p.Y)
		}
	}
	for _, m := range c.Marks {
		addX(m.X1)
		addX(m.X2)
		addY(m.Y1)
		addY(m.Y2)
	}
	for _, r := range c.Rules {
		if r.Horizontal {
			addY(r.Value)
		} else {
			addX(r.Value)
		}
	}
	for _, s := range c.Spans {
		addX(s.X1)
		addX(s.X2)
	}
	if math.IsInf(x0, 1) {
		x0, x1 = 0, 1
	}
	if math.IsInf(y0, 1) {
		y0, y1 = 0, 1
	}
	if c.XFromZero {
		x0 = math.Min(x0, 0)
	}
	if c.YFromZero {
		y0 = math.Min(y0, 0)
	}
	return x0, x1, y0, y1
}

// padded widens [lo, hi] by 6% each side so no marker sits on the frame,
// without crossing zero when the data does not.
func padded(lo, hi float64) (float64, float64) {
	pad := 0.06 * (hi - lo)
	if pad == 0 {
		pad = 0.06 * math.Max(math.Abs(hi), 1)
	}
	l, h := lo-pad, hi+pad
	if lo >= 0 && l < 0 {
		l = 0
	}
	return l, h
}

// Draw lays the chart out inside box.
func (c *XY) Draw(d *Doc, box Box) {
	x0, x1, y0, y1 := c.extent()
	xl, xh := padded(x0, x1)
	yl, yh := padded(y0, y1)
	xa, ya := NiceAxis(xl, xh, 6), NiceAxis(yl, yh, 5)
	if c.XInteger {
		xa = IntAxis(xl, xh, 8)
	}

	var yw float64
	for _, v := range ya.Ticks() {
		yw = math.Max(yw, TextWidth(ya.Label(v), tickSize))
	}
	xt := xa.Ticks()
	lastHalf := TextWidth(xa.Label(xt[len(xt)-1]), tickSize) / 2
	var legendW float64
	items := c.legendItems()
	if !c.NoLegend && len(items) > 0 {
		legendW, _ = legendExtent(items)
	}
	// The y label reads upwards left of the tick labels.
	left := 6 + RotatedTextBox(0, 0, c.YLabel, labelSize, "middle").W + 8 + yw + 8
	top := titleSize + 16.0
	bottom := tickSize + 8 + labelSize + 14
	right := math.Max(lastHalf+4, 12)
	if legendW > 0 {
		right += legendW + 12
	}
	plot := Box{X: box.X + left, Y: box.Y + top, W: box.W - left - right, H: box.H - top - bottom}
	sx := func(v float64) float64 { return xa.Scale(v, plot.X, plot.Right()) }
	sy := func(v float64) float64 { return ya.Scale(v, plot.Bottom(), plot.Y) }

	d.Open("chart xy")
	d.Text(box.X+left, box.Y+titleSize+2, c.Title, TextStyle{Size: titleSize, Weight: "600", Color: colorText, Class: "title"})
	d.Rect(plot, "#ffffff", Stroke{Color: colorAxis}, "plot-area")
	for _, s := range c.Spans {
		a, b := math.Max(sx(s.X1), plot.X), math.Min(sx(s.X2), plot.Right())
		if b > a {
			d.Rect(Box{X: a, Y: plot.Y, W: b - a, H: plot.H}, s.Fill, Stroke{}, "span")
		}
	}
	// Grid and ticks.
	d.Open("axis x")
	for _, v := range xt {
		x := sx(v)
		if v != xa.Min && v != xa.Max {
			d.Line(x, plot.Y, x, plot.Bottom(), Stroke{Color: colorGrid}, "grid")
		}
		d.Line(x, plot.Bottom(), x, plot.Bottom()+4, Stroke{Color: colorAxis}, "")
		d.Text(x, plot.Bottom()+4+tickSize, xa.Label(v), TextStyle{Size: tickSize, Anchor: "middle", Color: colorMuted, Class: "tick"})
	}
	d.Text(plot.X+plot.W/2, box.Y+box.H-8, c.XLabel, TextStyle{Size: labelSize, Anchor: "middle", Color: colorText, Class: "axis-label"})
	d.Close()
	d.Open("axis y")
	for _, v := range ya.Ticks() {
		y := sy(v)
		if v != ya.Min && v != ya.Max {
			d.Line(plot.X, y, plot.Right(), y, Stroke{Color: colorGrid}, "grid")
		}
		d.Line(plot.X-4, y, plot.X, y, Stroke{Color: colorAxis}, "")
		d.Text(plot.X-7, y+tickSize*0.35, ya.Label(v), TextStyle{Size: tickSize, Anchor: "end", Color: colorMuted, Class: "tick"})
	}
	ylx := box.X + 6 + labelSize
	d.Text(ylx, plot.Y+plot.H/2, c.YLabel, TextStyle{Size: labelSize, Anchor: "middle", Color: colorText, Rotate: -90, Class: "axis-label"})
	d.Close()

	for _, r := range c.Rules {
		if r.Horizontal {
			d.Line(plot.X, sy(r.Value), plot.Right(), sy(r.Value), r.Stroke, "rule")
		} else {
			d.Line(sx(r.Value), plot.Y, sx(r.Value), plot.Bottom(), r.Stroke, "rule")
		}
	}
	for _, m := range c.Marks {
		ax, ay, bx, by := sx(m.X1), sy(m.Y1), sx(m.X2), sy(m.Y2)
		st := Stroke{Color: m.Color, Width: 1.5, Dash: "4 3"}
		d.Line(ax, ay, bx, by, st, "mark")
		// The cap stands across the segment at the bound.
		dx, dy := bx-ax, by-ay
		if l := math.Hypot(dx, dy); l > 0 {
			dx, dy = dx/l, dy/l
		} else {
			dx, dy = 1, 0
		}
		d.Line(bx-dy*7, by+dx*7, bx+dy*7, by-dx*7, Stroke{Color: m.Color, Width: 2.5}, "mark-cap")
	}
	// Lines first, then markers and labels above every line.
	for _, s := range c.Series {
		if s.NoLine {
			continue
		}
		var pts [][2]float64
		for _, p := range s.Points {
			pts = append(pts, [2]float64{sx(p.X), sy(p.Y)})
		}
		d.Polyline(pts, Stroke{Color: s.Color, Width: 2, Dash: s.Dash}, "series-line")
	}
	// Labels keep off every marker and every mark's cap.
	var markers []Box
	for _, s := range c.Series {
		for _, p := range s.Points {
			markers = append(markers, Box{X: sx(p.X) - markerR - 1, Y: sy(p.Y) - markerR - 1, W: 2*markerR + 2, H: 2*markerR + 2})
		}
	}
	var segs []seg
	for _, m := range c.Marks {
		markers = append(markers, Box{X: sx(m.X2) - 8, Y: sy(m.Y2) - 8, W: 16, H: 16})
		segs = append(segs, seg{sx(m.X1), sy(m.Y1), sx(m.X2), sy(m.Y2)})
	}
	for _, s := range c.Series {
		for i := 1; i < len(s.Points) && !s.NoLine; i++ {
			a, b := s.Points[i-1], s.Points[i]
			segs = append(segs, seg{sx(a.X), sy(a.Y), sx(b.X), sy(b.Y)})
		}
	}
	var placed []Box
	for _, s := range c.Series {
		for _, p := range s.Points {
			x, y := sx(p.X), sy(p.Y)
			d.Open("point", "data-label", p.Label)
			d.Marker(s.Shape, x, y, markerR, s.Color, p.Hollow, "marker")
			if p.Label != "" {
				lx, ly, anchor, b := placeLabel(x, y, p.Label, plot, markers, placed, segs)
				placed = append(placed, b)
				d.Text(lx, ly, p.Label, TextStyle{Size: pointSize, Anchor: anchor, Color: s.Color, Class: "point-label"})
			}
			d.Close()
		}
	}
	if legendW > 0 {
		d.legend(plot.Right()+right-legendW, plot.Y, items)
	}
	d.Close()
}

// seg is a drawn line segment, x1 y1 x2 y2.
type seg [4]float64

// crosses reports whether the segment passes through b.
func (s seg) crosses(b Box) bool {
	// Sample the segment: exact clipping is more code than a label needs.
	const n = 24
	for i := 0; i <= n; i++ {
		f := float64(i) / n
		x, y := s[0]+f*(s[2]-s[0]), s[1]+f*(s[3]-s[1])
		if x > b.X && x < b.Right() && y > b.Y && y < b.Bottom() {
			return true
		}
	}
	return false
}

// placeLabel finds a place for a point's label beside its marker at
// (x, y): the first of eight positions that stays in the plot and
// covers no marker, no label placed before and no line, else the one
// that covers least (lines count least: a label may sit on a line).
func placeLabel(x, y float64, s string, plot Box, markers, placed []Box, lines []seg) (lx, ly float64, anchor string, b Box) {
	type cand struct {
		dx, dy float64
		anchor string
	}
	off := markerR + 4
	cands := []cand{
		{off, -off, "start"}, {off, off + pointSize*0.8, "start"},
		{-off, -off, "end"}, {-off, off + pointSize*0.8, "end"},
		{0, -off - 3, "middle"}, {0, off + pointSize + 1, "middle"},
		{off + 2, pointSize * 0.35, "start"}, {-off - 2, pointSize * 0.35, "end"},
	}
	best, bestCost := -1, math.Inf(1)
	var bestBox Box
	for i, c := range cands {
		bx := TextBox(x+c.dx, y+c.dy, s, pointSize, c.anchor)
		cost := 0.0
		if !bx.Inside(plot) {
			cost += 1e6 + outside(bx, plot)
		}
		for _, o := range append(markers[:len(markers):len(markers)], placed...) {
			if bx.Overlaps(o) {
				cost += bx.overlap(o) * 10
			}
		}
		for _, l := range lines {
			if l.crosses(bx) {
				cost += 20
			}
		}
		if cost == 0 {
			return x + c.dx, y + c.dy, c.anchor, bx
		}
		if cost < bestCost {
			best, bestCost, bestBox = i, cost, bx
		}
	}
	c := cands[best]
	lx, ly = x+c.dx, y+c.dy
	// Keep it inside the plot whatever it covers.
	if bestBox.X < plot.X {
		lx += plot.X - bestBox.X
	}
	if bestBox.Right() > plot.Right() {
		lx -= bestBox.Right() - plot.Right()
	}
	if bestBox.Y < plot.Y {
		ly += plot.Y - bestBox.Y
	}
	if bestBox.Bottom() > plot.Bottom() {
		ly -= bestBox.Bottom() - plot.Bottom()
	}
	return lx, ly, c.anchor, TextBox(lx, ly, s, pointSize, c.anchor)
}

// outside is how far b reaches beyond o, summed over the four sides.
func outside(b, o Box) float64 {
	return math.Max(o.X-b.X, 0) + math.Max(b.Right()-o.Right(), 0) + math.Max(o.Y-b.Y, 0) + math.Max(b.Bottom()-o.Bottom(), 0)
}

// Panels draws charts side by side in one drawing, each w px wide and h
// tall: small multiples that share a legend (give it to the last).
func Panels(title string, w, h float64, charts ...*XY) []byte {
	var d Doc
	for _, c := range charts {
		h = math.Max(h, c.MinHeight())
	}
	for i, c := range charts {
		c.Draw(&d, Box{X: float64(i) * w, W: w, H: h})
	}
	return d.SVG(w*float64(len(charts)), h, title)
}

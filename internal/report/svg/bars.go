package svg

import "math"

// Bars draws one horizontal stacked bar per row: names left of the plot,
// the total at each bar's end, the legend to the right of the plot.
type Bars struct {
	Title, XLabel string
	Names         []string
	Parts         []string
	Colors        []string
	// Values[row][part]; Unit formats each total at the bar's end.
	Values [][]float64
	Total  func(float64) string
}

const barRow = 28.0

// Render draws the chart w px wide; its height follows from its rows.
func (c *Bars) Render(w float64) []byte {
	var d Doc
	nameW := 0.0
	for _, n := range c.Names {
		nameW = math.Max(nameW, TextWidth(n, labelSize))
	}
	maxTotal, totalW := 0.0, 0.0
	totals := make([]float64, len(c.Values))
	for i, row := range c.Values {
		for _, v := range row {
			totals[i] += math.Max(v, 0)
		}
		maxTotal = math.Max(maxTotal, totals[i])
		if c.Total != nil {
			totalW = math.Max(totalW, TextWidth(c.Total(totals[i]), tickSize))
		}
	}
	var items []LegendItem
	for j, p := range c.Parts {
		items = append(items, LegendItem{Text: p, Fill: c.Colors[j]})
	}
	legendW, legendH := legendExtent(items)
	xa := NiceAxis(0, math.Max(maxTotal, 1e-9)*1.04, 6)
	last := TextWidth(xa.Label(xa.Max), tickSize) / 2
	plot := Box{X: 12 + nameW + 12, Y: titleSize + 18, H: math.Max(float64(len(c.Names))*barRow, legendH)}
	plot.W = w - plot.X - math.Max(last, 0) - legendW - 24
	// Room at the far end for the longest total.
	if totalW > 0 {
		xa = NiceAxis(0, maxTotal*(1+(totalW+12)/plot.W), 6)
	}
	sx := func(v float64) float64 { return xa.Scale(v, plot.X, plot.Right()) }
	h := plot.Bottom() + 4 + tickSize + 8 + labelSize + 12

	d.Open("chart bars")
	d.Text(12, titleSize+2, c.Title, TextStyle{Size: titleSize, Weight: "600", Color: colorText, Class: "title"})
	d.Rect(plot, "#ffffff", Stroke{Color: colorAxis}, "plot-area")
	for _, v := range xa.Ticks() {
		x := sx(v)
		if v != xa.Min && v != xa.Max {
			d.Line(x, plot.Y, x, plot.Bottom(), Stroke{Color: colorGrid}, "grid")
		}
		d.Line(x, plot.Bottom(), x, plot.Bottom()+4, Stroke{Color: colorAxis}, "")
		d.Text(x, plot.Bottom()+4+tickSize, xa.Label(v), TextStyle{Size: tickSize, Anchor: "middle", Color: colorMuted, Class: "tick"})
	}
	d.Text(plot.X+plot.W/2, h-12, c.XLabel, TextStyle{Size: labelSize, Anchor: "middle", Color: colorText, Class: "axis-label"})
	for i, name := range c.Names {
		cy := plot.Y + float64(i)*barRow + barRow/2
		d.Open("bar-row", "data-label", name)
		x := plot.X
		for j, v := range c.Values[i] {
			if v <= 0 {
				continue
			}
			bw := sx(v) - plot.X
			d.Rect(Box{X: x, Y: cy - 8, W: bw, H: 16}, c.Colors[j], Stroke{}, "bar")
			x += bw
		}
		d.Text(plot.X-8, cy+labelSize*0.35, name, TextStyle{Size: labelSize, Anchor: "end", Color: colorText, Class: "row-label"})
		if c.Total != nil {
			d.Text(x+6, cy+tickSize*0.35, c.Total(totals[i]), TextStyle{Size: tickSize, Color: colorMuted, Class: "point-label"})
		}
		d.Close()
	}
	d.legend(w-12-legendW, plot.Y, items)
	d.Close()
	return d.SVG(w, h, c.Title)
}

package svg

import "fmt"

// Palette is Okabe and Ito's colour-blind-safe set, darkest first, for
// series in order.
var Palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999933"}

// Color is the i-th series colour.
func Color(i int) string { return Palette[i%len(Palette)] }

// Status colours: a check's outcome.
const (
	ColorPass         = "#1a7f37"
	ColorFail         = "#cf222e"
	ColorInconclusive = "#9a6700"
	ColorNeutral      = "#57606a"
	colorGrid         = "#e6e8eb"
	colorAxis         = "#8c959f"
	colorText         = "#1f2328"
	colorMuted        = "#57606a"
)

// Shape is a marker shape; series cycle through them so two series
// differ by more than colour.
type Shape int

const (
	Circle Shape = iota
	Square
	Triangle
	Diamond
	shapes
)

// ShapeOf is the i-th series' shape.
func ShapeOf(i int) Shape { return Shape(i % int(shapes)) }

// Marker draws shape at (x, y), r its half-size; hollow markers are
// outlined in color and filled white.
func (d *Doc) Marker(sh Shape, x, y, r float64, color string, hollow bool, class string) {
	fill := color
	if hollow {
		fill = "#ffffff"
	}
	style := attrs("fill", fill, "stroke", color, "stroke-width", "1.5", "class", class)
	switch sh {
	case Square:
		r *= 0.9
		d.raw(fmt.Sprintf(`<rect x="%s" y="%s" width="%s" height="%s"%s/>`+"\n", num(x-r), num(y-r), num(2*r), num(2*r), style))
	case Triangle:
		r *= 1.15
		d.raw(fmt.Sprintf(`<polygon points="%s,%s %s,%s %s,%s"%s/>`+"\n", num(x), num(y-r), num(x+r), num(y+0.8*r), num(x-r), num(y+0.8*r), style))
	case Diamond:
		r *= 1.2
		d.raw(fmt.Sprintf(`<polygon points="%s,%s %s,%s %s,%s %s,%s"%s/>`+"\n", num(x), num(y-r), num(x+r), num(y), num(x), num(y+r), num(x-r), num(y), style))
	default:
		d.raw(fmt.Sprintf(`<circle cx="%s" cy="%s" r="%s"%s/>`+"\n", num(x), num(y), num(r), style))
	}
}

// LegendItem is one legend entry: a swatch and its text.
type LegendItem struct {
	Text string
	// The swatch: a line (Stroke.Color set), a marker (HasMarker), both,
	// or a filled block (Fill).
	Stroke    Stroke
	HasMarker bool
	Shape     Shape
	Color     string // marker colour
	Hollow    bool
	Fill      string
}

const (
	legendSize   = 12.0
	legendRow    = 20.0
	legendSwatch = 28.0
	legendPad    = 8.0
)

// legendSize is the extent of a legend of items set in one column.
func legendExtent(items []LegendItem) (w, h float64) {
	for _, it := range items {
		w = max(w, TextWidth(it.Text, legendSize))
	}
	return w + legendSwatch + 3*legendPad, float64(len(items))*legendRow + legendPad
}

// legend draws items in one column with its top left corner at (x, y);
// the box it returns is the one it framed.
func (d *Doc) legend(x, y float64, items []LegendItem) Box {
	w, h := legendExtent(items)
	box := Box{X: x, Y: y, W: w, H: h}
	d.Open("legend")
	d.Rect(box, "#ffffff", Stroke{Color: "#d0d7de"}, "legend-box")
	for i, it := range items {
		cy := y + legendPad/2 + float64(i)*legendRow + legendRow/2
		sx := x + legendPad
		d.swatch(sx, cy, it)
		d.Text(sx+legendSwatch+legendPad, cy+legendSize*0.35, it.Text, TextStyle{Size: legendSize, Color: colorText})
	}
	d.Close()
	return box
}

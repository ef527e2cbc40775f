// Package svg draws the HTML report's charts as plain SVG: axes with nice
// ticks, polylines, markers, intervals, bars, labels and a legend beside
// the data. It is small on purpose: the report needs a handful of chart
// kinds drawn the same way every time, and a general plotting library
// brought nine modules and about 5 MB of binary for them.
//
// Layout is computed, not left to the browser: every text's extent is
// estimated from its characters (TextWidth) with a wide sans-serif's
// metrics, so margins grow to fit tick labels, point labels are placed
// where they collide with nothing, and no text leaves the viewBox.
package svg

import (
	"fmt"
	"html"
	"strconv"
	"strings"
)

// FontFamily is the charts' font, the report page's own.
const FontFamily = `system-ui,-apple-system,"Segoe UI","DejaVu Sans",Verdana,sans-serif`

// Doc accumulates SVG elements; String wraps them in the root element
// once the drawing's size is known.
type Doc struct {
	b strings.Builder
}

// num renders a coordinate: one decimal, no exponent.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		return "0"
	}
	return s
}

func esc(s string) string { return html.EscapeString(s) }

// attrs renders name/value pairs, skipping empty values.
func attrs(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		fmt.Fprintf(&b, ` %s="%s"`, kv[i], esc(kv[i+1]))
	}
	return b.String()
}

// Open starts a group; Close ends it.
func (d *Doc) Open(class string, kv ...string) {
	fmt.Fprintf(&d.b, "<g%s%s>\n", attrs("class", class), attrs(kv...))
}

// Close ends the innermost group.
func (d *Doc) Close() { d.b.WriteString("</g>\n") }

// Stroke is how a line is drawn.
type Stroke struct {
	Color string
	Width float64
	Dash  string // stroke-dasharray, "" for solid
}

func (s Stroke) attrs() string {
	w := s.Width
	if w == 0 {
		w = 1
	}
	return attrs("stroke", s.Color, "stroke-width", num(w), "stroke-dasharray", s.Dash)
}

// Line draws a segment.
func (d *Doc) Line(x1, y1, x2, y2 float64, s Stroke, class string) {
	fmt.Fprintf(&d.b, `<line x1="%s" y1="%s" x2="%s" y2="%s"%s%s/>`+"\n", num(x1), num(y1), num(x2), num(y2), s.attrs(), attrs("class", class))
}

// Rect draws a rectangle.
func (d *Doc) Rect(b Box, fill string, s Stroke, class string) {
	st := ""
	if s.Color != "" {
		st = s.attrs()
	}
	fmt.Fprintf(&d.b, `<rect x="%s" y="%s" width="%s" height="%s"%s%s%s/>`+"\n",
		num(b.X), num(b.Y), num(b.W), num(b.H), attrs("fill", fill), st, attrs("class", class))
}

// Polyline draws a line through pts (x, y pairs).
func (d *Doc) Polyline(pts [][2]float64, s Stroke, class string) {
	if len(pts) < 2 {
		return
	}
	var b strings.Builder
	for i, p := range pts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(num(p[0]) + "," + num(p[1]))
	}
	fmt.Fprintf(&d.b, `<polyline points="%s" fill="none"%s stroke-linejoin="round"%s/>`+"\n", b.String(), s.attrs(), attrs("class", class))
}

// TextStyle is how a text is set. Anchor is "start", "middle" or "end".
type TextStyle struct {
	Size   float64
	Anchor string
	Weight string
	Color  string
	Class  string
	// Rotate -90 sets the text upwards about its anchor point.
	Rotate float64
}

// Text sets s with its baseline at y.
func (d *Doc) Text(x, y float64, s string, st TextStyle) {
	size := st.Size
	if size == 0 {
		size = 12
	}
	tr := ""
	if st.Rotate != 0 {
		tr = fmt.Sprintf("rotate(%s %s %s)", num(st.Rotate), num(x), num(y))
	}
	fmt.Fprintf(&d.b, `<text x="%s" y="%s" font-size="%s"%s>%s</text>`+"\n", num(x), num(y), num(size),
		attrs("text-anchor", st.Anchor, "font-weight", st.Weight, "fill", st.Color, "transform", tr, "class", st.Class), esc(s))
}

// Raw appends markup the caller built (a marker).
func (d *Doc) raw(s string) { d.b.WriteString(s) }

// SVG is the finished drawing of size w×h with a title for screen
// readers, ready to inline in HTML.
func (d *Doc) SVG(w, h float64, title string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img"%s style="font-family:%s">`+"\n",
		num(w), num(h), num(w), num(h), attrs("aria-label", title), esc(FontFamily))
	if title != "" {
		fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	}
	b.WriteString(d.b.String())
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// Box is a rectangle in drawing coordinates.
type Box struct{ X, Y, W, H float64 }

// Right and Bottom are the box's far edges.
func (b Box) Right() float64  { return b.X + b.W }
func (b Box) Bottom() float64 { return b.Y + b.H }

// Overlaps reports whether b and o share any area.
func (b Box) Overlaps(o Box) bool {
	return b.X < o.Right() && o.X < b.Right() && b.Y < o.Bottom() && o.Y < b.Bottom()
}

// Inside reports whether b lies within o.
func (b Box) Inside(o Box) bool {
	return b.X >= o.X-0.01 && b.Y >= o.Y-0.01 && b.Right() <= o.Right()+0.01 && b.Bottom() <= o.Bottom()+0.01
}

// overlap is the area b and o share.
func (b Box) overlap(o Box) float64 {
	w := min(b.Right(), o.Right()) - max(b.X, o.X)
	h := min(b.Bottom(), o.Bottom()) - max(b.Y, o.Y)
	if w <= 0 || h <= 0 {
		return 0
	}
	return w * h
}

package svg

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestNiceAxis(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		target int
		want   []string
	}{
		{0, 3990, 6, []string{"0", "1000", "2000", "3000", "4000"}},
		{0, 4229, 6, []string{"0", "1000", "2000", "3000", "4000", "5000"}},
		{0.8, 1.2, 6, []string{"0.8", "0.9", "1.0", "1.1", "1.2"}},
		{0, 12.9, 5, []string{"0", "5", "10", "15"}},
		{24.09, 24.93, 5, []string{"24.0", "24.2", "24.4", "24.6", "24.8", "25.0"}},
		{5, 5, 5, []string{"4.4", "4.6", "4.8", "5.0", "5.2", "5.4", "5.6"}},
		{0, 0, 5, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
	} {
		a := NiceAxis(tc.lo, tc.hi, tc.target)
		var got []string
		for _, v := range a.Ticks() {
			got = append(got, a.Label(v))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("NiceAxis(%v, %v) ticks %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
		if a.Min > tc.lo || a.Max < tc.hi {
			t.Errorf("NiceAxis(%v, %v) = [%v, %v] does not cover the data", tc.lo, tc.hi, a.Min, a.Max)
		}
	}
}

func TestIntAndLogAxes(t *testing.T) {
	a := IntAxis(0.5, 3.5, 8)
	for _, v := range a.Ticks() {
		if v != math.Trunc(v) {
			t.Errorf("IntAxis tick %v", v)
		}
	}
	l := LogAxis(0.18, 5.4)
	var got []string
	for _, v := range l.Ticks() {
		got = append(got, l.Label(v))
	}
	if want := []string{"0.1", "0.2", "0.5", "1", "2", "5", "10"}; !slices.Equal(got, want) {
		t.Errorf("LogAxis ticks %v, want %v", got, want)
	}
	if x := l.Scale(1, 0, 100); math.Abs(x-50) > 1e-9 {
		t.Errorf("1 on [0.1, 10] at %v, want the middle", x)
	}
}

func TestTextBoxes(t *testing.T) {
	b := TextBox(100, 50, "4000", 10, "middle")
	if math.Abs(b.X+b.W/2-100) > 1e-9 || b.Y >= 50 || b.Bottom() <= 50 {
		t.Errorf("centred box %+v", b)
	}
	if TextWidth("4000", 10) <= TextWidth("400", 10) || TextWidth("mmm", 10) <= TextWidth("iii", 10) {
		t.Error("widths do not grow with the text")
	}
	r := RotatedTextBox(20, 100, "p95 latency (ms)", 12, "middle")
	if r.W >= r.H || math.Abs(r.Y+r.H/2-100) > 1e-9 {
		t.Errorf("rotated box %+v", r)
	}
}

// Labels of points close together go where they cover neither markers
// nor each other.
func TestPlaceLabel(t *testing.T) {
	plot := Box{X: 0, Y: 0, W: 400, H: 300}
	var markers, placed []Box
	pts := [][2]float64{{100, 100}, {108, 100}, {100, 108}, {396, 4}}
	for _, p := range pts {
		markers = append(markers, Box{X: p[0] - 5, Y: p[1] - 5, W: 10, H: 10})
	}
	for _, p := range pts {
		_, _, _, b := placeLabel(p[0], p[1], "c=16", plot, markers, placed, []seg{{100, 100, 108, 100}})
		if !b.Inside(plot) {
			t.Errorf("label of %v outside the plot: %+v", p, b)
		}
		for _, o := range placed {
			if b.Overlaps(o) {
				t.Errorf("label of %v overlaps another", p)
			}
		}
		placed = append(placed, b)
	}
}

func TestRenderEscapes(t *testing.T) {
	c := XY{Title: `a <b> & "c"`, Series: []Series{{Name: "x<y", Points: []Point{{X: 1, Y: 2, Label: "c=1"}}}}}
	out := string(c.Render(600, 300))
	if strings.Contains(out, "<b>") || !strings.Contains(out, "a &lt;b&gt; &amp;") || !strings.Contains(out, "x&lt;y") {
		t.Errorf("not escaped:\n%s", out)
	}
}

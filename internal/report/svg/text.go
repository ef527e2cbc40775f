package svg

// Text extents are estimated from per-character advance widths of a wide
// sans-serif (DejaVu Sans, Verdana): narrower fonts only leave more room,
// so a layout that fits these metrics fits the browser's.

// TextWidth is the estimated advance width of s set at size px.
func TextWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		w += advance(r)
	}
	return w * size
}

func advance(r rune) float64 {
	switch {
	case r == ' ' || r == 'i' || r == 'l' || r == 'j' || r == '.' || r == ',' || r == ':' || r == ';' || r == '\'' || r == '|' || r == '!':
		return 0.34
	case r == 'f' || r == 't' || r == 'r' || r == '(' || r == ')' || r == '[' || r == ']' || r == '/' || r == '-' || r == 'I':
		return 0.45
	case r == 'm' || r == 'w' || r == 'M' || r == 'W' || r == '%' || r == '@' || r == '…':
		return 1.0
	case r == '=' || r == '+' || r == '<' || r == '>' || r == '≥' || r == '≤' || r == '×' || r == '~' || r == '±' || r == '→' || r == '◆' || r == '●' || r == '○':
		return 0.86
	case r >= 'A' && r <= 'Z':
		return 0.76
	case r >= '0' && r <= '9':
		return 0.65
	case r < 128:
		return 0.64
	}
	return 0.8 // µ, α and the rest: wide enough for any of them
}

// TextBox is the estimated extent of s set at (x, y) (y the baseline)
// with the given size and anchor, unrotated.
func TextBox(x, y float64, s string, size float64, anchor string) Box {
	w := TextWidth(s, size)
	switch anchor {
	case "middle":
		x -= w / 2
	case "end":
		x -= w
	}
	return Box{X: x, Y: y - 0.8*size, W: w, H: 1.05 * size}
}

// RotatedTextBox is TextBox for a text rotated by -90° about (x, y): it
// reads upwards, its baseline the vertical line x.
func RotatedTextBox(x, y float64, s string, size float64, anchor string) Box {
	b := TextBox(x, y, s, size, anchor)
	// Rotating by -90° about (x, y) maps (x+dx, y+dy) to (x+dy, y−dx).
	return Box{X: x + (b.Y - y), Y: y - (b.Right() - x), W: b.H, H: b.W}
}

package torchserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/internal/tensor"
)

// checker compares replies with one request's expectation; the expected
// JSON is decoded once, when the point is prepared.
type checker struct {
	e    *expectation
	want any
	tol  float64 // 0: numbers must be equal
}

func newChecker(e *expectation, tol float64) (*checker, error) {
	c := &checker{e: e, tol: tol}
	if e.json {
		v, err := decodeJSON(e.raw)
		if err != nil {
			return nil, err
		}
		c.want = v
	}
	return c, nil
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing content after the JSON value")
	}
	return v, nil
}

// check returns the first difference between got and the expectation,
// "" when they match.
func (c *checker) check(got []byte) string {
	if !c.e.json {
		if bytes.Equal(got, c.e.raw) {
			return ""
		}
		return fmt.Sprintf("reply differs from the expected bytes: got %d bytes %s, want %d bytes %s", len(got), clip(got), len(c.e.raw), clip(c.e.raw))
	}
	v, err := decodeJSON(got)
	if err != nil {
		return fmt.Sprintf("reply is not JSON (%v): %s", err, clip(got))
	}
	return c.diff("$", c.want, v)
}

// diff compares JSON values: objects key by key, arrays element by
// element, numbers by value (within tol when set), the rest exactly.
func (c *checker) diff(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %s, want an object", path, tensor.JSONKind(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s: key %q missing", path, k)
			}
			if d := c.diff(path+"."+k, w[k], gv); d != "" {
				return d
			}
		}
		if len(g) > len(w) {
			for k := range g {
				if _, ok := w[k]; !ok {
					return fmt.Sprintf("%s: unexpected key %q", path, k)
				}
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("%s: got %s, want an array", path, tensor.JSONKind(got))
		}
		if len(g) != len(w) {
			return fmt.Sprintf("%s: got %d elements, want %d", path, len(g), len(w))
		}
		for i := range w {
			if d := c.diff(path+"["+strconv.Itoa(i)+"]", w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: got %s, want the number %s", path, tensor.JSONKind(got), w)
		}
		if !c.numbersMatch(w, g) {
			if c.tol > 0 {
				return fmt.Sprintf("%s: got %s, want %s (tolerance %g)", path, g, w, c.tol)
			}
			return fmt.Sprintf("%s: got %s, want %s", path, g, w)
		}
		return ""
	}
	if want != got {
		return fmt.Sprintf("%s: got %s, want %s", path, show(got), show(want))
	}
	return ""
}

// numbersMatch compares two JSON numbers: integers exactly, others as
// float64, within tol (absolutely or relative to the smaller magnitude,
// the rule of validate's float tolerance) when tol is set.
func (c *checker) numbersMatch(w, g json.Number) bool {
	if wi, err := strconv.ParseInt(w.String(), 10, 64); err == nil {
		if gi, err := strconv.ParseInt(g.String(), 10, 64); err == nil && c.tol == 0 {
			return wi == gi
		}
	}
	wf, err1 := w.Float64()
	gf, err2 := g.Float64()
	if err1 != nil || err2 != nil {
		return w == g
	}
	if wf == gf {
		return true
	}
	if c.tol <= 0 {
		return false
	}
	d := math.Abs(wf - gf)
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return false
	}
	return d <= c.tol || d <= c.tol*math.Min(math.Abs(wf), math.Abs(gf))
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strings.TrimSpace(s)
}

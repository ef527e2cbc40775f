package validate

import (
	"fmt"
	"strings"
)

// Mismatch is one reported difference. Index is the flat row-major element
// index, or -1 for a tensor-level fault (missing output, datatype, shape).
type Mismatch struct {
	Tensor   string
	Index    int
	Expected string
	Got      string
}

func (m Mismatch) String() string {
	if m.Index < 0 {
		return fmt.Sprintf("%s: expected %s, got %s", m.Tensor, m.Expected, m.Got)
	}
	return fmt.Sprintf("%s[%d]: expected %s, got %s", m.Tensor, m.Index, m.Expected, m.Got)
}

// Result counts compared elements and differences. A tensor-level fault
// counts as one mismatch.
type Result struct {
	Checked    int        // elements compared
	Mismatches int        // elements (or tensors) that differ
	First      []Mismatch // the first few, at most Options.MaxReported
}

// OK reports whether everything compared equal.
func (r Result) OK() bool { return r.Mismatches == 0 }

// String is "ok (N elements)" or the reported mismatches, one per line, with
// a count of those left out.
func (r Result) String() string {
	if r.OK() {
		return fmt.Sprintf("ok (%d elements)", r.Checked)
	}
	lines := make([]string, 0, len(r.First)+1)
	for _, m := range r.First {
		lines = append(lines, m.String())
	}
	if more := r.Mismatches - len(r.First); more > 0 {
		lines = append(lines, fmt.Sprintf("... and %d more mismatches (%d elements checked)", more, r.Checked))
	}
	return strings.Join(lines, "\n")
}

func (r *Result) add(m Mismatch, max int) {
	r.Mismatches++
	if len(r.First) < max {
		r.First = append(r.First, m)
	}
}

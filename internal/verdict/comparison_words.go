package verdict

import (
	"fmt"
	"sort"
	"strings"

	"github.com/perfscen/perfscen/internal/numfmt"
)

// The words of a comparison's decision. A comparison decides only when
// both of its parts agree: the one-sided rank test (after Holm over every
// comparison check) and the bootstrap interval, which must lie wholly on
// one side of the bound. When it does not decide, the message says which
// part held it back and why, with the p-value and the level that part was
// held to, so a reader can follow it without the code.

// holmStep is where one hypothesis stands in Holm's step-down procedure
// (stats.Holm): the level its p was held to, alpha/(m−rank), and whether
// the procedure stopped at an earlier hypothesis before reaching it.
type holmStep struct {
	level   float64
	blocked bool
}

// holmSteps mirrors stats.Holm's order (p/alpha ascending, stable) and
// stopping rule to say, for each p, the level it met or missed.
func holmSteps(p, alpha []float64) []holmStep {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return p[idx[x]]/alpha[idx[x]] < p[idx[y]]/alpha[idx[y]] })
	out := make([]holmStep, m)
	stopped := false
	for j, i := range idx {
		out[i] = holmStep{level: alpha[i] / float64(m-j), blocked: stopped}
		if p[i]*float64(m-j) > alpha[i] {
			stopped = true
		}
	}
	return out
}

// testSide is one direction of a comparison check: the rank test that the
// ratio lies beyond the bound (pass) or short of it (fail), and whether
// the interval lies wholly on that side.
type testSide struct {
	p        float64
	holm     holmStep
	rejected bool
	ci       bool
}

type decision struct {
	c          *Check
	m          int    // comparison checks in the Holm family
	look       string // ", look 1 of 3" or ""
	pass, fail testSide
	// lo95 and hi95 are the 95% interval the decision requires to lie
	// beyond the bound (testSide.ci); the check's Lo and Hi are shown at
	// the rank test's level, which may be wider. A statement of where the
	// interval lies names the 95% one: a 99.9% interval [0.216, 1.650]
	// does not lie "wholly below the bound 1".
	lo95, hi95 float64
}

// sides names the side of the bound a passing ratio lies on, and the other.
func (d decision) sides() (good, bad string) {
	if d.c.Op == "<=" {
		return "below", "above"
	}
	return "above", "below"
}

func (d decision) interval() string {
	return fmt.Sprintf("%s interval [%s, %s]", numfmt.Percent(d.c.Confidence), numfmt.Ratio(d.c.Lo), numfmt.Ratio(d.c.Hi))
}

// decisive is the 95% interval the decision holds to its bound, for
// statements of which side of the bound it lies on; it is the shown one
// where the two levels agree (or where no 95% interval was kept).
func (d decision) decisive() string {
	if d.c.Confidence == CIConfidence || d.lo95 == 0 && d.hi95 == 0 {
		return d.interval()
	}
	return fmt.Sprintf("%s interval [%s, %s]", numfmt.Percent(CIConfidence), numfmt.Ratio(d.lo95), numfmt.Ratio(d.hi95))
}

// lying is the interval to name in "… lies wholly on side of the bound"
// (passSide: the side a passing ratio lies on): the shown one where that
// is true of it, else the 95% one the decision used.
func (d decision) lying(passSide bool) string {
	above := d.c.Lo > d.c.Bound
	below := d.c.Hi < d.c.Bound
	wantAbove := (d.c.Op == ">=") == passSide
	if wantAbove && above || !wantAbove && below {
		return d.interval()
	}
	return d.decisive()
}

func (d decision) bound() string { return numfmt.Significant(d.c.Bound, 6) }

// held says at which level a test was judged: "α = 0.0045 after Holm
// over 4 checks, look 1 of 3".
func (d decision) held(s testSide) string {
	if d.m == 1 {
		return fmt.Sprintf("%s%s", numfmt.PEq("α", s.holm.level), d.look)
	}
	return fmt.Sprintf("%s after Holm over %d checks%s", numfmt.PEq("α", s.holm.level), d.m, d.look)
}

func (d decision) counts() string {
	if d.c.Method == methodPaired {
		// The ratio is the median of the rounds' ratios, and the tests
		// are on those pairs.
		return fmt.Sprintf("n = %d rounds, paired", d.c.N)
	}
	return fmt.Sprintf("n = %d/%d", d.c.N, d.c.NRef)
}

func (d decision) passed() string {
	good, _ := d.sides()
	return fmt.Sprintf("ratio %s, %s lies wholly %s the bound %s, and the rank test shows it (%s ≤ %s; %s)",
		numfmt.Ratio(d.c.Value), d.lying(true), good, d.bound(), numfmt.PEq("p", d.pass.p), d.held(d.pass), d.counts())
}

func (d decision) failed() string {
	_, bad := d.sides()
	if d.c.Unchanged > 0 {
		return fmt.Sprintf("ratio %s, not %s %s, and a change from the unchanged ratio %s is shown: %s lies wholly %s it, and the rank test shows it (%s ≤ %s; %s)",
			numfmt.Ratio(d.c.Value), d.c.Op, d.bound(), d.unchanged(), d.lyingFromUnchanged(), bad, numfmt.PEq("p", d.fail.p), d.held(d.fail), d.counts())
	}
	return fmt.Sprintf("ratio %s shown not %s %s: %s lies wholly %s the bound, and the rank test shows it (%s ≤ %s; %s)",
		numfmt.Ratio(d.c.Value), d.c.Op, d.bound(), d.lying(false), bad, numfmt.PEq("p", d.fail.p), d.held(d.fail), d.counts())
}

func (d decision) unchanged() string { return numfmt.Significant(d.c.Unchanged, 6) }

// lyingFromUnchanged is the interval to name in "… lies wholly above
// (below) the unchanged ratio": the shown one where that is true of it,
// else the 95% one the decision used.
func (d decision) lyingFromUnchanged() string {
	if _, bad := d.sides(); bad == "above" && d.c.Lo > d.c.Unchanged || bad == "below" && d.c.Hi < d.c.Unchanged {
		return d.interval()
	}
	return d.decisive()
}

// undecided is the side an undecided check leans to: where its interval
// lies, else where its ratio lies. Its p is the one reported.
func (d decision) undecided() (s testSide, failSide bool) {
	switch {
	case d.fail.ci:
		return d.fail, true
	case d.pass.ci:
		return d.pass, false
	case (d.c.Op == "<=") == (d.c.Value <= d.c.Bound):
		return d.pass, false
	}
	return d.fail, true
}

// changeNotShown says why a comparison with an unchanged ratio, whose
// ratio lies beyond the bound (undecided puts it on the fail side only
// then), did not fail: the change from the unchanged ratio was not shown,
// by the interval or by the rank test.
func (d decision) changeNotShown(s testSide, bad string) string {
	head := fmt.Sprintf("the ratio lies %s the bound %s", bad, d.bound())
	switch {
	case s.ci && s.holm.blocked && s.p <= s.holm.level:
		return fmt.Sprintf("%s, and the %s lies wholly %s the unchanged ratio %s, and the rank test's %s is within its level %s, but Holm's procedure stopped earlier, at a check that missed its stricter level, so a change is not shown",
			head, d.lyingFromUnchanged(), bad, d.unchanged(), numfmt.PEq("p", s.p), d.held(s))
	case s.ci:
		return fmt.Sprintf("%s, and the %s lies wholly %s the unchanged ratio %s, but the rank test's %s > %s, so a change is not shown",
			head, d.lyingFromUnchanged(), bad, d.unchanged(), numfmt.PEq("p", s.p), d.held(s))
	case s.rejected:
		return fmt.Sprintf("%s, and the rank test shows a change from the unchanged ratio %s (%s ≤ %s), but the %s contains it",
			head, d.unchanged(), numfmt.PEq("p", s.p), d.held(s), d.decisive())
	}
	return fmt.Sprintf("%s, but the %s contains the unchanged ratio %s, and the rank test's %s > %s, so a change is not shown",
		head, d.decisive(), d.unchanged(), numfmt.PEq("p", s.p), d.held(s))
}

// beyondBound says value lies on the failing side of a bound with op.
func beyondBound(op string, bound, value float64) bool {
	if op == ">=" {
		return value < bound
	}
	return value > bound
}

// inconclusive spells out why neither side was shown: the interval
// straddles the bound, or it lies on one side but the rank test did not
// reject at its Holm level (or Holm stopped before reaching it).
func (d decision) inconclusive() string {
	good, bad := d.sides()
	s, failSide := d.undecided()
	side := good
	if failSide {
		side = bad
	}
	var why string
	switch {
	case failSide && d.c.Unchanged > 0:
		why = d.changeNotShown(s, bad)
	case s.ci && s.holm.blocked && s.p <= s.holm.level:
		why = fmt.Sprintf("%s lies wholly %s the bound %s, and the rank test's %s is within its level %s, but Holm's procedure stopped earlier, at a check that missed its stricter level, so a ratio %s the bound is not shown",
			d.lying(!failSide), side, d.bound(), numfmt.PEq("p", s.p), d.held(s), side)
	case s.ci:
		why = fmt.Sprintf("%s lies wholly %s the bound %s, but the rank test's %s > %s, so a ratio %s the bound is not shown",
			d.lying(!failSide), side, d.bound(), numfmt.PEq("p", s.p), d.held(s), side)
	case s.rejected:
		why = fmt.Sprintf("the rank test puts the ratio %s the bound %s (%s ≤ %s), but the %s contains the bound",
			side, d.bound(), numfmt.PEq("p", s.p), d.held(s), d.interval())
	default:
		why = fmt.Sprintf("the %s contains the bound %s, and the rank test's %s > %s",
			d.interval(), d.bound(), numfmt.PEq("p", s.p), d.held(s))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "inconclusive: ratio %s; %s; detectable margin %s, %s%s",
		numfmt.Ratio(d.c.Value), why, numfmt.MDE(d.c.MDE), d.counts(), needText(d.c.NeedN, "per arm"))
	return b.String()
}

package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/result"
)

// paFloat prints a double the way perf_analyzer's C++ streams do
// (default precision: 6 significant digits, %g style).
func paFloat(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// usec truncates microseconds to an integer, as perf_analyzer's ns/1000.
func usec(v float64) string {
	if v < 0 || math.IsNaN(v) {
		return "0"
	}
	return strconv.FormatUint(uint64(v), 10)
}

func truncUs(v float64) float64 {
	if v < 0 || math.IsNaN(v) {
		return 0
	}
	return math.Trunc(v)
}

// quantity renders a value with its unit for people, as every check
// message does (numfmt.Value): a bound in a table is the bound in its
// check's message, character for character.
func quantity(v float64, unit string) string { return numfmt.Value(v, unit) }

func signedPct(v float64) string { return numfmt.SignedPct(v) }

// checkRow is a check's cells, shared by the console, Markdown and HTML
// tables.
type checkRow struct {
	Status, Kind, Name, Where, Value, Bound, Effect, Interval, P, N, MDE string
}

var checkHeader = []string{"status", "kind", "check", "model/point", "value", "bound", "effect", "interval", "p", "n", "MDE"}

func (r checkRow) cells() []string {
	return []string{r.Status, r.Kind, r.Name, r.Where, r.Value, r.Bound, r.Effect, r.Interval, r.P, r.N, r.MDE}
}

func rowOf(c verdict.Check) checkRow {
	r := checkRow{
		Status: strings.ReplaceAll(string(c.Status), "_", " "),
		Kind:   string(c.Kind),
		Name:   c.Name,
		Where:  where(c),
	}
	if c.NoValue {
		// Nothing was compared: no value, bound or effect to show, rather
		// than zeros that read like a measurement.
		return r.counts(c)
	}
	skip := c.Status == verdict.StatusSkip
	if !skip || c.Value != 0 {
		r.Value = quantity(c.Value, c.Unit)
	}
	switch {
	case c.Uncalibrated && c.Bound == 0:
		r.Bound = "none (uncalibrated)"
	case c.Op != "" && (!skip || c.Bound != 0):
		r.Bound = c.Op + " " + quantity(c.Bound, c.Unit)
	}
	if c.Effect != 0 || (!skip && (c.Kind == verdict.KindComparison || c.Kind == verdict.KindBaseline)) {
		r.Effect = signedPct(c.Effect)
	}
	// An uncalibrated check's interval spans changes of 100% and more: no
	// statement about the run, so it is not printed (the JSON keeps it).
	if (c.Lo != 0 || c.Hi != 0) && !(c.Uncalibrated && c.Kind == verdict.KindBaseline) {
		if c.Kind == verdict.KindComparison {
			r.Interval = fmt.Sprintf("[%s, %s]", numfmt.Ratio(c.Lo), numfmt.Ratio(c.Hi))
		} else {
			r.Interval = fmt.Sprintf("[%s, %s]", signedPct(c.Lo), signedPct(c.Hi))
		}
		if c.Confidence > 0 {
			r.Interval += " @" + numfmt.Percent(c.Confidence)
		}
	}
	if c.P > 0 && meaningfulP(c) {
		r.P = numfmt.P(c.P)
	}
	r = r.counts(c)
	switch {
	case c.Uncalibrated && c.MDE <= numfmt.MaxMDE:
		// A tolerance gate without history: its band is no detectable
		// change the data supports.
		r.MDE = "uncalibrated"
	case c.MDE > 0 && c.Kind == verdict.KindBaseline:
		r.MDE = numfmt.HistoryMDE(c.MDE)
	case c.MDE > 0:
		r.MDE = numfmt.MDE(c.MDE)
	}
	return r
}

// counts fills the n column: trials in this run, and history runs.
func (r checkRow) counts(c verdict.Check) checkRow {
	switch {
	case c.N > 0 && c.NRef > 0:
		r.N = fmt.Sprintf("%d/%d", c.N, c.NRef)
	case c.N > 0:
		r.N = strconv.Itoa(c.N)
	}
	return r
}

// meaningfulP: only the rank test and the prediction interval yield a p;
// tolerance checks and plain ratio comparisons do not.
func meaningfulP(c verdict.Check) bool {
	switch c.Method {
	case "mann-whitney+bootstrap", "signed-rank+bootstrap", "prediction-interval":
		return true
	case "":
		return c.Kind != verdict.KindComparison && c.Kind != verdict.KindBaseline
	}
	return false
}

// where names what a check is about: its point (a comparison's two arms,
// candidate first), else its model. With several servers the point ids
// carry the server, so both arms are named with theirs.
func where(c verdict.Check) string {
	if c.Point != "" && c.RefPoint != "" {
		return c.Point + " vs " + c.RefPoint
	}
	if c.Point != "" {
		return c.Point
	}
	return c.Model
}

func label(c verdict.Check) string {
	if w := where(c); w != "" {
		return c.Name + " @ " + w
	}
	return c.Name
}

// maxListed caps how many failed checks the one-line summary names.
const maxListed = 10

// SummaryLine is the closing verdict line; its first word is the run's
// outcome, so it always agrees with the exit code: "PASS: 12 checks
// passed", "FAIL: 2 of 12 checks failed: p95 < 30ms @ onnx/c=10; …",
// "COULD NOT MEASURE: …", "INTERRUPTED: …", "INCONCLUSIVE: …".
func SummaryLine(v *verdict.Verdict) string {
	if v == nil {
		return "PASS: no checks defined"
	}
	var passed, warned, skipped int
	for _, c := range v.Checks {
		switch c.Status {
		case verdict.StatusPass, verdict.StatusWarn:
			passed++
		case verdict.StatusSkip:
			skipped++
		}
		warned += len(checkWarnings(c))
	}
	failed := v.Failed()
	notGated := v.NotGated()
	switch v.Outcome() {
	case verdict.OutcomeInterrupted:
		return "INTERRUPTED: the run was cancelled before it finished; no verdict on the server" + listed(" (", failed, ")")
	case verdict.OutcomeNotMeasured:
		return fmt.Sprintf("COULD NOT MEASURE: %d of %s failed: %s", len(failed), plural(len(v.Checks), "check"), names(failed, true)) + notGatedNote(notGated)
	case verdict.OutcomeFail:
		return fmt.Sprintf("FAIL: %d of %s failed: %s", len(failed), plural(len(v.Checks), "check"), names(failed, false)) + notGatedNote(notGated)
	case verdict.OutcomeInconclusive:
		inc := v.Inconclusive()
		if len(inc) == 0 {
			// Only not-gated checks keep this run from passing.
			return fmt.Sprintf("INCONCLUSIVE: %d of %s not gated (gate.require_gated): %s", len(notGated), plural(len(v.Checks), "check"), notGatedNames(notGated))
		}
		return fmt.Sprintf("INCONCLUSIVE: %d of %s undecided: %s", len(inc), plural(len(v.Checks), "check"), names(inc, false)) + notGatedNote(notGated)
	}
	if len(v.Checks) == 0 {
		return "PASS: no checks defined"
	}
	s := "PASS"
	if len(notGated) > 0 {
		// A check that could not see the change it is for never reads as
		// a plain pass.
		s += fmt.Sprintf(" — %s not gated (%s)", plural(len(notGated), "check"), notGatedNames(notGated))
	}
	s += fmt.Sprintf(": %s passed", plural(passed, "check"))
	var extra []string
	if warned > 0 {
		extra = append(extra, plural(warned, "warning"))
	}
	if skipped > 0 {
		extra = append(extra, fmt.Sprintf("%d skipped", skipped))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// checkWarnings are the warning lines every report lists for c: its
// message when the check ended as a warning (an empty line, shown as the
// check's label, when it has nothing else to say), then its own warnings. The
// summary line counts them, so "(10 warnings)" stands beside ten lines.
func checkWarnings(c verdict.Check) []string {
	var out []string
	if c.Status == verdict.StatusWarn && (c.Message != "" || len(c.Warnings) == 0) {
		out = append(out, c.Message)
	}
	return append(out, c.Warnings...)
}

// warningText is one warning line: "label: text", or the label alone for
// a warning check without a message.
func warningText(c verdict.Check, text string) string {
	if text == "" {
		return label(c)
	}
	return label(c) + ": " + text
}

// notGatedNames lists not-gated checks with why each was not: the part
// of the message before its details.
func notGatedNames(cs []verdict.Check) string {
	out := make([]string, 0, maxListed)
	for i, c := range cs {
		if i == maxListed {
			out = append(out, fmt.Sprintf("and %d more", len(cs)-maxListed))
			break
		}
		out = append(out, label(c)+": "+NotGatedReason(c))
	}
	return strings.Join(out, "; ")
}

// NotGatedReason is why a not-gated check was not gated, in a few words
// ("testbed noise hides changes under 66% (the check is meant to catch
// 20%)").
func NotGatedReason(c verdict.Check) string {
	m := strings.TrimPrefix(c.Message, "not gated: ")
	m = strings.TrimPrefix(m, "NOT GATED: ")
	if i := strings.Index(m, "; "); i > 0 {
		m = m[:i]
	}
	if i := strings.Index(m, ". "); i > 0 {
		m = m[:i]
	}
	return m
}

// notGatedNote is the tail of a non-passing summary that also had checks
// which were not gated.
func notGatedNote(cs []verdict.Check) string {
	if len(cs) == 0 {
		return ""
	}
	return fmt.Sprintf(" (and %s not gated)", plural(len(cs), "check"))
}

func listed(pre string, cs []verdict.Check, post string) string {
	if len(cs) == 0 {
		return ""
	}
	return pre + names(cs, false) + post
}

// names lists checks for the summary line, at most maxListed; withMessage
// adds the first check's message, the reason a run could not measure.
func names(cs []verdict.Check, withMessage bool) string {
	out := make([]string, 0, maxListed)
	for i, c := range cs {
		if i == maxListed {
			out = append(out, fmt.Sprintf("and %d more", len(cs)-maxListed))
			break
		}
		n := label(c)
		if withMessage && i == 0 && c.Message != "" {
			n += " (" + c.Message + ")"
		}
		out = append(out, n)
	}
	return strings.Join(out, "; ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// pointCells are a point's figures-table cells (latencies in µs, as
// perf_analyzer prints them): the figures checks are held to
// (result.Point.FigureMetrics), so a number here is the number in a check row.
// "errors" counts failed requests in the kept trials, as the error budget
// does; "all errors" counts them in every window, stabilization included.
var pointHeader = []string{"point", "status", "batch", "protocol", "trials", "infer/s", "avg us", "p50 us", "p90 us", "p95 us", "p99 us", "errors", "all errors"}

func pointCells(p *result.Point) []string {
	m := p.FigureMetrics()
	if p.Status == result.PointFailed || len(p.Trials) == 0 && m.Requests == 0 && m.Errors == 0 && m.Throughput == 0 && m.P50Us == 0 {
		// Nothing kept, or nothing that measures the server (a point that
		// could not be measured): no figure, rather than numbers that
		// read as one.
		return []string{p.ID, p.Status, strconv.Itoa(p.BatchSize), string(p.Protocol), "0",
			"-", "-", "-", "-", "-", "-", "-", strconv.FormatInt(p.Errors.Count, 10)}
	}
	return []string{
		p.ID, p.Status, strconv.Itoa(p.BatchSize), string(p.Protocol), strconv.Itoa(len(p.Trials)), paFloat(m.Throughput),
		usec(m.LatencyAvgUs), usec(m.P50Us), usec(m.P90Us), usec(m.P95Us), usec(m.P99Us),
		strconv.FormatInt(m.Errors, 10), strconv.FormatInt(p.Errors.Count, 10),
	}
}

// FiguresNote says how the figures of run's points were taken; it heads
// every points table.
func FiguresNote(run *result.Run) string {
	var kept, imported bool
	for i := range run.Points {
		if len(run.Points[i].Trials) > 0 {
			kept = true
		} else if run.Points[i].Summary.Requests > 0 || run.Points[i].Summary.Throughput > 0 {
			imported = true
		}
	}
	var parts []string
	if kept {
		parts = append(parts, "figures are medians over each point's kept trials (errors: totals over them; maxima: the largest); perf_analyzer's pooled figures are the result's \"summary\"")
	}
	if imported {
		parts = append(parts, "points without trials show the figures their file recorded")
	}
	return strings.Join(parts, "; ")
}

// ServerText describes one server of a run: what it says it is and where
// it was, for labelling the arms of a run over several servers.
func ServerText(s result.ServerInfo) string {
	if s.Embedded {
		return "embedded reference server"
	}
	what := strings.TrimSpace(s.Name + " " + s.Version)
	if what == "" {
		what = "unknown server"
	}
	if s.URL != "" {
		what += " at " + s.URL
	}
	return what
}

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
)

// Progress modes (--progress).
const (
	progressAuto   = "auto"
	progressAlways = "always"
	progressNever  = "never"
)

// progressInterval is the least time between two window lines of one
// point in a log (stderr not a terminal): a 13-minute run in CI says what
// it is doing every few seconds, not every window of every point.
const progressInterval = 10 * time.Second

func checkProgressMode(m string) error {
	switch m {
	case progressAuto, progressAlways, progressNever:
		return nil
	}
	return exitcode.AsInvalid(fmt.Errorf("--progress %q: want auto, always or never", m))
}

// progressFor reports the run as it goes, on stderr. On a terminal one
// line is rewritten in place; anywhere else (CI logs, pipes, files) each
// point's start and end get a line, and its windows one line every
// progressInterval at most, so a log shows what is being measured, how
// fast, and how far along the run is. --progress always writes a line
// for every window, terminal or not; --progress never and --quiet turn
// progress off.
func progressFor(e *env, f reportFlags, pl *plan.Plan) func(engine.Event) {
	if f.quiet || f.progress == progressNever {
		return nil
	}
	terminal := false
	if file, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(file.Fd())) && e.getenv("CI") == "" {
		terminal = true
	}
	p := &progress{w: e.stderr, terminal: terminal, now: time.Now, interval: progressInterval}
	if f.progress == progressAlways {
		p.terminal, p.interval = false, 0
	}
	if pl != nil {
		est := scenario.Estimate(pl)
		p.best, p.worst = est.Total, est.Worst
		p.plan = pl
	}
	p.start = p.now()
	return p.event
}

// progress holds what the progress lines need between events.
type progress struct {
	w            io.Writer
	terminal     bool
	now          func() time.Time
	interval     time.Duration
	start        time.Time
	best, worst  time.Duration
	windows      int
	lastLine     time.Time
	pointStarted time.Time
	plan         *plan.Plan // for each point's throughput unit; nil: infer/s
}

// unit is what a point's throughput counts: requests for an openai-kind
// server (an LLM request is not an inference of a batch), else
// inferences, as in the reports.
func (p *progress) unit(pt *plan.Point) string {
	if p.plan == nil || pt == nil {
		return "infer/s"
	}
	srv, ok := p.plan.ServerOf(pt.Server)
	if all := p.plan.Servers; !ok && len(all) == 1 {
		srv = all[0]
	}
	if srv.Kind == plan.KindOpenAI {
		return "req/s"
	}
	return "infer/s"
}

func (p *progress) event(ev engine.Event) {
	now := p.now()
	where := fmt.Sprintf("[%d/%d] %s", ev.Index+1, ev.Total, ev.Point.ID)
	switch ev.Kind {
	case engine.PointStarted:
		p.windows, p.pointStarted, p.lastLine = 0, now, now
		if p.terminal {
			fmt.Fprintf(p.w, "\r\033[K%s: starting", where)
			return
		}
		fmt.Fprintf(p.w, "progress: %s: starting; %s\n", where, p.elapsed(now))
	case engine.WindowDone:
		p.windows++
		state := "stabilizing"
		if ev.Stable {
			state = "stable"
		}
		figs := windowFigures(ev, p.unit(ev.Point))
		if p.terminal {
			fmt.Fprintf(p.w, "\r\033[K%s: window %d, %s, %s", where, p.windows, figs, state)
			return
		}
		if !ev.Stable && now.Sub(p.lastLine) < p.interval {
			return
		}
		p.lastLine = now
		fmt.Fprintf(p.w, "progress: %s: window %d, %s, %s; %s\n", where, p.windows, figs, state, p.elapsed(now))
	case engine.PointDone:
		r := ev.Result
		m := r.FigureMetrics()
		rate := numfmt.Value(m.Throughput, p.unit(ev.Point))
		if m.LLM != nil && m.LLM.OutputTokensPerSec > 0 {
			rate += ", " + numfmt.Value(m.LLM.OutputTokensPerSec, "tokens/s")
		}
		line := fmt.Sprintf("%s: %s, %d trial(s), %s, p50 %s, p99 %s, %s", where, r.Status, len(r.Trials),
			rate, duration(m.P50Us), duration(m.P99Us), errorsText(r, m.Errors))
		if p.terminal {
			fmt.Fprintf(p.w, "\r\033[K%s\n", line)
			return
		}
		fmt.Fprintf(p.w, "progress: %s; %s\n", line, p.elapsed(now))
	}
}

// errorsText is a finished point's failed requests as the Points table
// counts them: those of the kept trials, and every one of the point's
// when more failed outside them. A point that kept no trial (a server
// that died) has only the latter: its last line must not say "0 error(s)"
// beside a summary of 20 failures.
func errorsText(r *result.Point, kept int64) string {
	all := max(r.Errors.Count, kept)
	switch {
	case len(r.Trials) == 0:
		return fmt.Sprintf("%d error(s)", all)
	case all > kept:
		return fmt.Sprintf("%d error(s) (%d in all)", kept, all)
	}
	return fmt.Sprintf("%d error(s)", kept)
}

// windowFigures are a window's throughput (in unit), median and p99
// latency and errors.
func windowFigures(ev engine.Event, unit string) string {
	w := ev.Window
	s := numfmt.Value(w.Throughput, unit)
	if m := ev.Metrics; m != nil {
		s += fmt.Sprintf(", p50 %s, p99 %s", duration(m.P50Us), duration(m.P99Us))
	} else {
		s += ", latency " + duration(w.LatencyUs)
	}
	return s + fmt.Sprintf(", %d error(s)", w.Errors)
}

// elapsed is the run's elapsed time against the plan's estimate (best to
// worst case, extra trials included).
func (p *progress) elapsed(now time.Time) string {
	s := "elapsed " + roundDur(now.Sub(p.start)).String()
	if p.best > 0 {
		s += " of an estimated " + roundDur(p.best).String()
		if p.worst > p.best {
			s += "–" + roundDur(p.worst).String()
		}
	}
	return s
}

func roundDur(d time.Duration) time.Duration { return d.Round(time.Second) }

// duration renders microseconds for people in the shared number format;
// "-" where nothing completed.
func duration(us float64) string {
	if us <= 0 {
		return "-"
	}
	return numfmt.Micros(us)
}

// rollup is one scenario's line in the closing table of a run over
// several scenarios.
type rollup struct {
	scenario string
	outcome  string
	code     int
	deciding string
}

// printRollup writes the table that ends a multi-scenario run: which
// scenario ended how, with its exit code and the checks that decided it,
// so an inconclusive scenario in the middle of nine is not found by
// scrolling.
func printRollup(w io.Writer, rows []rollup, worst int) {
	width := len("scenario")
	for _, r := range rows {
		width = max(width, len(r.scenario))
	}
	fmt.Fprintf(w, "\nScenarios\n%-*s  %-17s  %-4s  %s\n", width, "scenario", "outcome", "exit", "deciding checks")
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s  %-17s  %-4d  %s\n", width, r.scenario, r.outcome, r.code, r.deciding)
	}
	fmt.Fprintf(w, "exit %d: %s\n", worst, exitMeaning(worst))
}

func exitMeaning(code int) string {
	switch code {
	case exitcode.OK:
		return "every scenario passed"
	case exitcode.CheckFailed:
		return "a check failed on measured data"
	case exitcode.Invalid:
		return "an invalid scenario, data, baseline or command line"
	case exitcode.Environment:
		return "could not measure"
	case exitcode.Inconclusive:
		return "inconclusive"
	}
	return "exit " + fmt.Sprint(code)
}

// rollupOf is a scenario's roll-up line from its result.
func rollupOf(name string, code int, run *result.Run) rollup {
	r := rollup{scenario: name, code: code, outcome: "invalid"}
	if run == nil || run.Verdict == nil {
		return r
	}
	r.outcome = strings.ReplaceAll(run.Verdict.Outcome, "_", " ")
	if run.Verdict.Outcome == result.OutcomePass {
		n := 0
		for _, c := range run.Verdict.Checks {
			if c.Status == "not_gated" {
				n++
			}
		}
		if n > 0 {
			r.deciding = fmt.Sprintf("%d check(s) not gated", n)
		}
	} else if _, rest, ok := strings.Cut(run.Verdict.Summary, ": "); ok {
		r.deciding = rest
	}
	if len(r.deciding) > 160 {
		r.deciding = r.deciding[:157] + "..."
	}
	return r
}

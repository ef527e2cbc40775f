package runner

import (
	"context"
	"io"
	"time"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/scenariorun"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// DefaultConnectTimeout bounds how long a run waits for a server to answer
// its readiness check before it gives up (could not measure).
const DefaultConnectTimeout = kinds.DefaultConnectTimeout

// RefusedGrace is how long a run with the default connect timeout keeps
// retrying a server that has refused every connection from the start.
const RefusedGrace = kinds.RefusedGrace

// Options tune a run; the zero value measures and decides as perfscen run
// does with no flags.
type Options struct {
	// Version is recorded in the result as the measuring tool's version.
	Version string
	// Progress, when set, is called from the run's goroutine as points
	// start, windows close and points finish; it must not block for long.
	Progress func(Event)
	// ConnectTimeout bounds the wait for each server to become ready
	// (default DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// Testbed names the testbed the run is filed under in baselines;
	// empty takes the scenario's baseline.testbed, else one derived from
	// the hardware and the servers (never the hostname).
	Testbed string
	// NoBaseline decides without the scenario's baseline history.
	NoBaseline bool
	// Log hears of the extra trials measured for checks that could not
	// decide yet; nil discards.
	Log io.Writer
}

// EventKind says what an Event reports.
type EventKind int

// Events, in the order a point sees them.
const (
	PointStarted EventKind = iota // Point is about to be measured
	WindowDone                    // Window closed; Stable says the point just became stable
	PointDone                     // Result holds the point's figures
)

// Event is a progress report.
type Event struct {
	Kind   EventKind
	Index  int // the point's index in the plan
	Total  int // points in the plan
	Point  *plan.Point
	Window *result.Window
	Stable bool
	Result *result.Point
}

// Run measures the plan and decides it, as perfscen run does: it starts
// the embedded server when the plan asks for one and reaches every other
// server, checks what the scenario needs of each (models, input data,
// extensions) before any load, measures every point the way perf_analyzer
// does, and decides the thresholds, comparisons and baseline gate, giving
// inconclusive checks more trials within the scenario's budgets.
//
// The verdict is recorded in the result (run.Verdict: outcome, exit code
// as the perfscen command would exit, summary line, every check). The
// result is returned whenever the scenario got as far as its servers,
// together with the error that stopped the run, so measured figures are
// never lost; with invalid input (a bad baseline, a model the server does
// not have, input data that does not fit) it may be nil, and no verdict
// was reached.
func Run(ctx context.Context, p *plan.Plan, opts Options) (*result.Run, error) {
	so := scenariorun.Options{Version: opts.Version, ConnectTimeout: opts.ConnectTimeout, NoBaseline: opts.NoBaseline}
	if opts.Testbed != "" {
		if err := plan.CheckTestbedName(opts.Testbed); err != nil {
			return nil, err
		}
		so.Testbed = engine.TestbedName{Name: opts.Testbed, Source: "option"}
	}
	if opts.Log != nil {
		so.Log = opts.Log
	}
	if f := opts.Progress; f != nil {
		so.Progress = func(ev engine.Event) {
			f(Event{Kind: EventKind(ev.Kind), Index: ev.Index, Total: ev.Total, Point: ev.Point, Window: ev.Window,
				Stable: ev.Stable, Result: ev.Result})
		}
	}
	run, _, err := scenariorun.Run(ctx, p, so)
	return run, err
}

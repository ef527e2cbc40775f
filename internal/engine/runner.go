package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/perfscen/perfscen/internal/wakeprobe"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/procacct"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Deps are the resources a run needs; the caller builds, checks and closes
// them.
type Deps struct {
	// Servers are the plan's servers made ready by their kinds, by name:
	// "" for the one server of a scenario's server:.
	Servers map[string]kinds.Server
	// Notes are run-level remarks recorded in the result (e.g. what the
	// server lacks that the scenario did not need).
	Notes []string
	// MetricsClient scrapes each server's metrics_url; nil uses a plain HTTP
	// client with a 5 s timeout.
	MetricsClient *http.Client
	// Remote, when set, runs every session on agents (a coordinator's
	// fleet); Servers are then used for server statistics only.
	Remote Remote
	// Processes are the servers' own CPU accounting, by server name as in
	// Servers (procacct.Locate): read at every window's edges into
	// result.ProcessStats. A server without one has no such figures.
	Processes map[string]procacct.Source
}

// Options tune a run; the zero value gives perf_analyzer's behavior.
type Options struct {
	// Version is this perfscen's version, recorded in the environment.
	Version string
	// Progress, when set, is called from the run's goroutine as points
	// start, windows close and points finish; it must not block for long.
	Progress func(Event)
	// Now is the wall clock for timestamps in the result; durations always
	// use the monotonic clock. Nil means time.Now.
	Now func() time.Time
	// MinCountWindow is the count_windows time granularity: a window lasts a
	// whole number of these (perf_analyzer: 1 s).
	MinCountWindow time.Duration
	// MaxCountWindow closes a count window that never reaches its count.
	// Default 60 s.
	MaxCountWindow time.Duration
	// ValidateEvery checks one response in this many of each data entry
	// under time windows, after a point's first 100 (default 10); count
	// windows and iterations check every response.
	ValidateEvery int
	// Drain is how long in-flight requests may finish after a stop or an
	// interrupt (default 500 ms).
	Drain time.Duration
	// Seed drives Poisson schedules (default 1).
	Seed uint64
	// MetricsInterval is the GPU metrics scrape period (default 1 s).
	MetricsInterval time.Duration
	// EngineInterval is the LLM engine metrics scrape period (default
	// 250 ms: a few readings in the shortest windows).
	EngineInterval time.Duration
	// Testbed names the testbed the run is filed under; empty derives it
	// from the hardware and the server.
	Testbed TestbedName
	// Extend, when set, is asked once every point is measured, and again
	// after each extension, which points need more kept trials and how
	// many (the checks whose intervals straddle their bounds). The runner
	// measures them interleaved, in rounds of one window per point, while
	// the server and connections are still up. Nil or no points: done.
	Extend func(run *result.Run) (points []string, trials int)
	// SampleCPU reads the machine's CPU counters for the disturbance
	// sentinel (default: ReadCPU("/proc")); ok false records none.
	SampleCPU func() (CPUSample, bool)
	// PlainTimers waits for every scheduled send on an ordinary timer,
	// never spinning: for tests on testing/synctest's fake clock, whose
	// time stands still while a goroutine spins.
	PlainTimers bool
	// wakeProbe: the default sampler also reads the wake-up probe, which
	// runs while the run does.
	wakeProbe bool
	// Schedule, when set, is asked once the plan's points are measured,
	// and again after each step it asks for, what to measure next: a new
	// point (a search's next probe) or more kept trials of a point
	// already measured. A zero Next ends the schedule.
	Schedule func(run *result.Run) Next
	// Abort, when set, sees every closed window of every point: a
	// non-empty reason stops the point there (status aborted); stopRun
	// also stops the run, the points after it unmeasured.
	Abort func(p *plan.Point, w *result.Window, m *result.Metrics) (reason string, stopRun bool)
	// Requests, when set, is given every request of every point as its
	// worker completes it, warm-up and every window included
	// (perf_analyzer's per-request records, --profile-export-file). It is
	// called from the point's workers at once, so it must be safe for
	// concurrent use and quick. Local loads only: a coordinator's agents
	// keep no records.
	Requests func(p *plan.Point, r *Record)
}

// Next is a Schedule's answer.
type Next struct {
	// Point is measured next; its ID must be new to the run.
	Point *plan.Point
	// More names a measured point that gets Trials more kept trials.
	More   string
	Trials int
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MinCountWindow <= 0 {
		o.MinCountWindow = time.Second
	}
	if o.MaxCountWindow <= 0 {
		o.MaxCountWindow = time.Minute
	}
	if o.ValidateEvery <= 0 {
		o.ValidateEvery = 10
	}
	if o.Drain <= 0 {
		o.Drain = 500 * time.Millisecond
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.EngineInterval <= 0 {
		o.EngineInterval = 250 * time.Millisecond
	}
	if o.MetricsInterval <= 0 {
		o.MetricsInterval = time.Second
	}
	if o.SampleCPU == nil {
		o.SampleCPU = func() (CPUSample, bool) { return ReadCPU("/proc") }
		o.wakeProbe = true
	}
	return o
}

// EventKind says what an Event reports.
type EventKind int

const (
	PointStarted EventKind = iota // Point is about to be measured
	WindowDone                    // Window closed (Stable: the point is now stable)
	PointDone                     // Result holds the point's figures
)

// Event is a progress report.
type Event struct {
	Kind   EventKind
	Index  int // point index in the plan
	Total  int // points in the plan
	Point  *plan.Point
	Window *result.Window
	// Metrics are the closed window's figures (WindowDone): latency
	// percentiles and errors for progress lines.
	Metrics *result.Metrics
	Stable  bool
	Result  *result.Point
	// Start and End bound the closed window (WindowDone) on the
	// session's clock, the clock Options.Requests' records are on.
	Start, End time.Time
}

// checkMeasurement refuses a measurement that scenario resolution did not
// default: the runner applies no defaults of its own, so a zero here is a
// caller that built a plan by hand and forgot a field.
func checkMeasurement(m plan.Measurement) error {
	switch {
	case m.Mode != plan.TimeWindows && m.Mode != plan.CountWindows:
		return fmt.Errorf("runner: measurement mode %q is not %s or %s", m.Mode, plan.TimeWindows, plan.CountWindows)
	case m.Mode == plan.TimeWindows && m.Window <= 0:
		return fmt.Errorf("runner: measurement window %s must be positive", m.Window)
	case m.MaxTrials <= 0:
		return fmt.Errorf("runner: measurement max_trials %d must be positive", m.MaxTrials)
	case m.StabilityPct <= 0:
		return fmt.Errorf("runner: measurement stability %g%% must be positive", m.StabilityPct)
	}
	return nil
}

// ErrUnreachable marks a run stopped because requests could no longer reach
// the server.
var ErrUnreachable = errors.New("server unreachable")

// runState is shared by the points of one run.
type runState struct {
	plan   *plan.Plan
	deps   Deps
	opts   Options
	seqIDs atomic.Uint64
	// sessionIDs number the sessions started on agents.
	sessionIDs atomic.Uint64
	// servers are the plan's servers by name ("" for the one server of
	// a scenario's server:), in plan order.
	servers map[string]*serverState
	order   []*serverState
	total   int
	// wake is the wake-up probe while the run lasts (nil without one).
	wake *wakeprobe.Probe
	// live are the units measured so far, kept (with their points' shared
	// memory) until the run ends so an extension can add trials.
	live []*unit
	// stopped, once set, says why the run stopped early (an abort_on
	// condition on a point of the sweep).
	stopped string
}

func (rs *runState) sampleCPU() (CPUSample, bool) {
	s, ok := rs.opts.SampleCPU()
	if ok && rs.wake != nil {
		w := rs.wake.Snapshot()
		s.Wake = &w
	}
	return s, ok
}

func (rs *runState) progress(e Event) {
	if rs.opts.Progress != nil {
		e.Total = rs.total
		rs.opts.Progress(e)
	}
}

// serverState is one server of the run: its settings, its kind's handle
// and its GPU metrics.
type serverState struct {
	srv    plan.Server
	server kinds.Server
	gpu    *gpuScraper
	engine *engineScraper // an LLM engine's figures (kinds.EngineGauges)
	// proc is the server's own CPU accounting; nil without one.
	proc procacct.Source
}

// newServers pairs the plan's servers with the prepared servers the caller
// gave.
func newServers(p *plan.Plan, deps Deps) (map[string]*serverState, []*serverState, error) {
	byName := map[string]*serverState{}
	var order []*serverState
	for _, s := range p.Servers {
		ks, ok := deps.Servers[s.Name]
		if !ok || ks == nil {
			if s.Name == "" {
				return nil, nil, errors.New("engine: Deps.Servers has no server")
			}
			return nil, nil, fmt.Errorf("engine: no prepared server %q", s.Name)
		}
		ss := &serverState{srv: s, server: ks, proc: deps.Processes[s.Name]}
		byName[s.Name], order = ss, append(order, ss)
	}
	return byName, order, nil
}

func (rs *runState) server(name string) (*serverState, error) {
	ss, ok := rs.servers[name]
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("server %q is not in the plan", name))
	}
	return ss, nil
}

// Run measures every point of p in order and returns the results. The
// result is returned even with an error: its Status says whether the run
// completed, stopped early (partial) or was interrupted, and Points holds
// what was measured. Per-request failures are data in the result; an error
// means the run could not go on; it carries a failure kind (Environment for
// the server or machine, InvalidInput for input such as CUDA shared memory).
func Run(ctx context.Context, p *plan.Plan, deps Deps, opts Options) (*result.Run, error) {
	opts = opts.withDefaults()
	// A schedule adds points as the run goes; they join a copy of the
	// plan's list, never the caller's.
	pc := *p
	pc.Points = slices.Clone(p.Points)
	p = &pc
	run := &result.Run{
		SchemaVersion: result.SchemaVersion,
		Scenario:      p.Scenario, ScenarioPath: p.ScenarioPath, ScenarioHash: p.ScenarioHash,
		Source: "perfscen", Started: opts.Now(), Status: result.StatusComplete, Points: []result.Point{},
		Overrides: p.Overrides,
	}
	run.RunID = result.NewRunID(run.Started)
	servers, order, err := newServers(p, deps)
	if err != nil {
		return finishRun(run, opts, failure.Invalid(err))
	}
	if err := checkMeasurement(p.Measurement); err != nil {
		return finishRun(run, opts, failure.Invalid(err))
	}
	run.Notes = append(run.Notes, deps.Notes...)
	run.Environment = environment(p, order, opts.Version, opts.Testbed)
	if s, ok := opts.SampleCPU(); ok {
		run.Notes = append(run.Notes, sentinelNotes(s)...)
	}
	rs := &runState{plan: p, deps: deps, opts: opts, servers: servers, order: order, total: len(p.Points)}
	if opts.wakeProbe {
		if probe, release, ok := wakeprobe.Acquire(); ok {
			rs.wake = probe
			defer release()
			// The servers' CPU time by CPU, sampled at the pace of the
			// probe's per-CPU kernel (withWork).
			for _, src := range deps.Processes {
				if s, ok := src.(procacct.CPUSampler); ok {
					defer probe.OnKernel(s.SampleCPUs)()
				}
			}
		}
	}
	defer func() {
		for _, u := range rs.live {
			for _, pr := range u.prs {
				pr.cleanup()
			}
		}
	}()
	for _, ss := range order {
		// The kind says whether its metrics endpoint holds GPU gauges.
		if g, ok := ss.server.(kinds.GPUGauges); ok && g.GPUMetricsURL() != "" {
			ss.gpu = startGPUScraper(ctx, deps.MetricsClient, g.GPUMetricsURL(), opts.MetricsInterval)
			defer ss.gpu.close()
		}
		if g, ok := ss.server.(kinds.EngineGauges); ok && g.EngineMetricsURL() != "" {
			ss.engine = startEngineScraper(ctx, g, opts.EngineInterval)
			defer ss.engine.close()
		}
	}

	results := make([]*result.Point, len(p.Points))
	var runErr error
	for i := range p.Points {
		if results[i] != nil {
			continue
		}
		if ctx.Err() != nil {
			run.Status = result.StatusInterrupted
			break
		}
		idx := []int{i}
		switch pt := p.Points[i]; {
		case pt.Group != 0:
			idx = sameAs(p, i, func(o *plan.Point) bool { return o.Group == pt.Group })
		case pt.Together != 0:
			idx = sameAs(p, i, func(o *plan.Point) bool { return o.Together == pt.Together })
		}
		pts, interrupted, err := rs.measure(ctx, idx)
		for k, j := range idx {
			if pts[k] != nil {
				results[j] = pts[k]
			}
		}
		if err != nil {
			runErr = err
			run.Status = result.StatusPartial
			break
		}
		if interrupted {
			run.Status = result.StatusInterrupted
			break
		}
		if rs.stopped != "" {
			run.Notes = append(run.Notes, rs.stopped)
			break
		}
	}
	collect := func() {
		run.Points = run.Points[:0]
		for i, r := range results {
			if r != nil {
				run.Points = append(run.Points, *r)
			}
			// A mix's whole figures follow its last member.
			if u := rs.unitEndingAt(i); u != nil && u.total != nil {
				run.Points = append(run.Points, *u.total)
			}
		}
	}
	collect()
schedule:
	for opts.Schedule != nil && runErr == nil && rs.stopped == "" && run.Status == result.StatusComplete && ctx.Err() == nil {
		next := opts.Schedule(run)
		switch {
		case next.Point != nil:
			i := len(p.Points)
			p.Points = append(p.Points, *next.Point)
			results = append(results, nil)
			rs.total = len(p.Points)
			pts, interrupted, err := rs.measure(ctx, []int{i})
			results[i] = pts[0]
			if err != nil {
				runErr, run.Status = err, result.StatusPartial
			} else if interrupted {
				run.Status = result.StatusInterrupted
			}
		case next.More != "" && next.Trials > 0:
			units := rs.extendable([]string{next.More})
			if len(units) == 0 {
				runErr, run.Status = fmt.Errorf("engine: schedule asked for more trials of %q, which cannot take them", next.More), result.StatusPartial
				break
			}
			interrupted, err := rs.extend(ctx, units, next.Trials)
			for _, u := range units {
				for k, pt := range u.finish(interrupted, err) {
					pr := u.prs[k]
					results[pr.idx] = pt
					rs.progress(Event{Kind: PointDone, Index: pr.idx, Point: pr.p, Result: pt})
				}
			}
			if err != nil {
				runErr, run.Status = err, result.StatusPartial
			} else if interrupted {
				run.Status = result.StatusInterrupted
			}
		default:
			break schedule
		}
		collect()
	}
	for opts.Extend != nil && runErr == nil && run.Status == result.StatusComplete && ctx.Err() == nil {
		ids, trials := opts.Extend(run)
		units := rs.extendable(ids)
		if len(units) == 0 || trials <= 0 {
			break
		}
		interrupted, err := rs.extend(ctx, units, trials)
		for _, u := range units {
			for k, pt := range u.finish(interrupted, err) {
				pr := u.prs[k]
				results[pr.idx] = pt
				rs.progress(Event{Kind: PointDone, Index: pr.idx, Point: pr.p, Result: pt})
			}
		}
		collect()
		if err != nil {
			runErr = err
			run.Status = result.StatusPartial
		} else if interrupted {
			run.Status = result.StatusInterrupted
		}
	}
	for _, ss := range order {
		ss.engine.close()
		if n := ss.engine.note(); n != "" {
			if ss.srv.Name != "" {
				n = "server " + ss.srv.Name + ": " + n
			}
			run.Notes = append(run.Notes, n)
		}
	}
	scraped := false
	for _, ss := range order {
		if ss.gpu == nil {
			continue
		}
		ss.gpu.close() // the last scrape is counted before its note is read
		if n := ss.gpu.note(); n != "" {
			if ss.srv.Name != "" {
				n = "server " + ss.srv.Name + ": " + n
			}
			run.Notes = append(run.Notes, n)
		}
		if scraped {
			continue // the machine's GPUs, as the first server's metrics name them
		}
		scraped = true
		run.Environment.GPU = ss.gpu.describe()
		if run.Environment.GPUCount == 0 {
			// A remote server's GPUs are known only by its metrics.
			run.Environment.GPUCount = ss.gpu.count()
		}
	}
	if scraped {
		setTestbed(&run.Environment, opts.Testbed)
	}
	return finishRun(run, opts, runErr)
}

func finishRun(run *result.Run, opts Options, err error) (*result.Run, error) {
	run.Finished = opts.Now()
	if err != nil {
		if run.Status == result.StatusComplete {
			run.Status = result.StatusPartial
		}
		run.Errors = append(run.Errors, err.Error())
	}
	return run, err
}

// sameAs lists the points from i on that are like point i by same.
func sameAs(p *plan.Plan, i int, same func(*plan.Point) bool) []int {
	var idx []int
	for j := i; j < len(p.Points); j++ {
		if same(&p.Points[j]) {
			idx = append(idx, j)
		}
	}
	return idx
}

// unitEndingAt is the live unit whose last member is point i.
func (rs *runState) unitEndingAt(i int) *unit {
	for _, u := range rs.live {
		if u.prs[len(u.prs)-1].idx == i {
			return u
		}
	}
	return nil
}

// measure runs one unit, or a group of units interleaved. idx are plan
// points in order; points sharing a Together form one unit.
func (rs *runState) measure(ctx context.Context, idx []int) ([]*result.Point, bool, error) {
	out := make([]*result.Point, len(idx))
	var units []*unit
	for _, i := range idx {
		pr, err := rs.newPointRunner(ctx, i)
		if err != nil {
			return out, false, fmt.Errorf("point %s: %w", rs.plan.Points[i].ID, err)
		}
		t := pr.p.Together
		if n := len(units); t != 0 && n > 0 && units[n-1].prs[0].p.Together == t {
			units[n-1].prs = append(units[n-1].prs, pr)
			continue
		}
		u := &unit{rs: rs, prs: []*pointRunner{pr}, mix: pr.p.Mix}
		units = append(units, u)
		rs.live = append(rs.live, u)
	}
	var interrupted bool
	var err error
	if len(units) == 1 {
		for _, pr := range units[0].prs {
			rs.progress(Event{Kind: PointStarted, Index: pr.idx, Point: pr.p})
		}
		interrupted, err = units[0].standalone(ctx)
	} else {
		interrupted, err = rs.interleave(ctx, units)
	}
	k := 0
	for _, u := range units {
		for j, pt := range u.finish(interrupted, err) {
			out[k] = pt
			rs.progress(Event{Kind: PointDone, Index: u.prs[j].idx, Point: u.prs[j].p, Result: pt})
			k++
		}
	}
	return out, interrupted, err
}

// extendable are the live units holding any of ids (a point, or a whole
// mix's figures) that can take more kept windows: measured to the end,
// not a fixed iteration count. Extending a mix member extends its whole
// mix: its neighbours are its load.
func (rs *runState) extendable(ids []string) []*unit {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out []*unit
	for _, u := range rs.live {
		hit := u.total != nil && want[u.total.ID]
		for _, pr := range u.prs {
			hit = hit || want[pr.p.ID]
		}
		if !hit || u.iterationsOnly() || u.failed() {
			continue
		}
		ok := true
		for _, pr := range u.prs {
			ok = ok && len(pr.kept) > 0 && (pr.status == result.PointStable || pr.status == result.PointUnstable)
		}
		if ok {
			out = append(out, u)
		}
	}
	return out
}

// extend adds trials kept windows to each unit, in rounds of one window
// per unit like interleave, the order alternating on from the rounds
// already kept, so drift during the extension hits every arm alike. Each
// window is its own session with its warm-up, as in interleaved
// measurement.
func (rs *runState) extend(ctx context.Context, units []*unit, trials int) (bool, error) {
	done := 0
	if len(units) > 0 && len(units[0].prs) > 0 {
		done = len(units[0].prs[0].kept)
	}
	for round := 0; round < trials; round++ {
		for _, u := range inRoundOrder(units, done+round) {
			if interrupted, err := u.outcome(u.round(ctx)); interrupted || err != nil {
				return interrupted, err
			}
		}
	}
	return false, nil
}

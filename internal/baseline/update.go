package baseline

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/busy"
	"github.com/perfscen/perfscen/internal/stats"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// UpdateOptions controls how a run enters the history.
type UpdateOptions struct {
	Replace bool // drop the testbed's history and keep only this run
	Force   bool // accept runs with failed, unstable or partial points
	// AllowUnstable accepts unstable (but complete) points, for scenarios
	// that set allow_unstable: their gate is judged on the trials. A run
	// whose recorded verdict is a pass had them allowed already (without
	// allow_unstable an unstable point fails its run with exit 3), so its
	// unstable points are accepted without it.
	AllowUnstable bool
	Keep          int       // history length; 0 means plan.DefaultKeep
	Now           time.Time // recording time; zero means time.Now()
}

// DiffMetrics are the metrics a Diff reports changes for.
var DiffMetrics = []string{plan.MetricThroughput, plan.MetricP50, plan.MetricP95, plan.MetricP99}

// Diff says what an update changes, for printing before it is written.
type Diff struct {
	Scenario            string
	Testbed             string
	NewFile, NewTestbed bool
	// MigratedFrom is the legacy (hostname-hashed) testbed key whose
	// history moved under Testbed.
	MigratedFrom string
	// PreIdentity marks a MigratedFrom history filed before the CPU's
	// identity was recorded (Lookup), not a hostname-hashed one.
	PreIdentity bool
	Replaced    bool
	RunsBefore  int
	RunsAfter   int
	Dropped     []time.Time // Recorded times of history entries removed
	NewPoints   []string    // in the run, not in the history
	// Unstable are the points recorded although they did not settle
	// (allow_unstable): the history keeps their status and kept trials,
	// which are what the run's gate judged.
	Unstable            []string
	MissingPoints       []string // in the latest history run, not in this run
	ScenarioHashChanged bool
	Changes             []MetricChange
}

// MetricChange is one point × metric: the history centre before, this
// run's median, and the detectable change before and after.
type MetricChange struct {
	Point, Metric string
	Before        float64 // geometric mean of history run medians (0: none)
	Run           float64 // this run's median
	MDEBefore     float64
	MDEAfter      float64
}

// Update files run into f under its testbed and returns what changed.
// Runs with failed, unstable or partial points are refused unless
// opts.Force, since they would poison the noise estimates.
func Update(f *File, run *result.Run, opts UpdateOptions) (*Diff, error) {
	if err := f.CheckScenario(run.Scenario); err != nil {
		return nil, err
	}
	if len(run.Points) == 0 {
		return nil, failure.Invalid(errors.New("run has no points to record"))
	}
	if !opts.Force {
		if err := recordable(run, opts.AllowUnstable); err != nil {
			return nil, err
		}
	}
	if err := f.notRecorded(run); err != nil {
		return nil, err
	}
	keep := opts.Keep
	if keep <= 0 {
		keep = plan.DefaultKeep
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now().UTC()
	}
	tb, id, legacy := f.Lookup(run)
	d := &Diff{Scenario: f.Scenario, Testbed: id, NewFile: len(f.Testbeds) == 0, Replaced: opts.Replace, MigratedFrom: legacy,
		PreIdentity: PreIdentity(legacy, run)}
	if legacy != "" {
		// The legacy history moves under the derived key, so the next
		// update does not find it twice.
		delete(f.Testbeds, legacy)
		tb.ID = id
		f.Testbeds[id] = tb
	}
	if tb == nil {
		tb = &Testbed{ID: id}
		f.Testbeds[id] = tb
		d.NewTestbed = true
	}
	d.RunsBefore = len(tb.Runs)
	if f.ScenarioHash != "" && run.ScenarioHash != "" && f.ScenarioHash != run.ScenarioHash {
		d.ScenarioHashChanged = true
	}

	entry := Summarize(run)
	entry.Recorded = now
	d.Unstable = unstablePoints(run)
	d.pointChanges(tb, &entry)
	before := tb.Noise

	if opts.Replace {
		for _, r := range tb.Runs {
			d.Dropped = append(d.Dropped, r.Recorded)
		}
		tb.Runs = nil
	}
	tb.Runs = append([]Run{entry}, tb.Runs...)
	// The history is kept in the order the runs started, latest first,
	// and a full one drops the run that started first: recording older
	// runs after newer ones (results collected from several CI jobs) gives
	// the same history as recording them as they ran.
	slices.SortStableFunc(tb.Runs, func(a, b Run) int { return b.When().Compare(a.When()) })
	for len(tb.Runs) > keep {
		d.Dropped = append(d.Dropped, tb.Runs[len(tb.Runs)-1].Recorded)
		tb.Runs = tb.Runs[:len(tb.Runs)-1]
	}
	d.RunsAfter = len(tb.Runs)
	tb.Environment = run.Environment
	tb.Updated = now
	tb.Recompute()
	if run.ScenarioHash != "" {
		f.ScenarioHash = run.ScenarioHash
	}
	d.metricChanges(before, tb.Noise, &entry)
	return d, nil
}

func recordable(run *result.Run, allowUnstable bool) error {
	if v := run.Verdict; v != nil && v.Outcome == result.OutcomePass {
		// The run's own gate passed with its unstable points judged on
		// their kept trials: the scenario allowed them. Refusing them here
		// would leave a busy runner's history without a single run.
		allowUnstable = true
	}
	if run.Status != "" && run.Status != result.StatusComplete {
		return failure.Invalid(fmt.Errorf("run is %s; record only complete runs (or use --force)", run.Status))
	}
	if err := tooBusy(run, allowUnstable); err != nil {
		return err
	}
	if v := run.Verdict; v != nil && v.Outcome != result.OutcomePass {
		var failed []string
		for _, c := range v.Checks {
			if c.Status == "fail" || c.Status == "inconclusive" {
				name := c.Name
				if c.Point != "" {
					name += " @ " + c.Point
				}
				failed = append(failed, name)
			}
		}
		msg := fmt.Sprintf("the run's verdict is %s (exit %d)", v.Outcome, v.ExitCode)
		if len(failed) > 0 {
			msg += ": " + strings.Join(failed, "; ")
		}
		return failure.Invalid(fmt.Errorf("%s; a baseline records only runs that passed (use --force to record it anyway)", msg))
	}
	for _, p := range run.Points {
		if p.Status == result.PointUnstable && allowUnstable || p.Search != "" {
			// A search's probes past its answer are overloaded by design.
			continue
		}
		switch p.Status {
		case result.PointFailed, result.PointUnstable, result.PointPartial:
			return failure.Invalid(fmt.Errorf("point %s is %s; a baseline from it would mislead later gates (use --force to record it anyway)", p.ID, p.Status))
		}
	}
	return nil
}

// tooBusy refuses, as could not measure (exit 3), a run with a point that
// did not settle because the machine was too busy (busy.TooBusy), in the
// words every report uses, naming the contention: the input is fine, the
// runner was not. A run that failed a check on its data is refused for
// that instead.
func tooBusy(run *result.Run, allowUnstable bool) error {
	if allowUnstable || run.Verdict != nil && run.Verdict.Outcome == result.OutcomeFail {
		return nil
	}
	for i := range run.Points {
		p := &run.Points[i]
		if p.Search != "" {
			continue
		}
		if s, ok := busy.Unsettled(p, run.Environment.NumCPU); ok {
			return failure.Env(errors.New(busy.NotRecorded(p.ID, s, run.Environment.NumCPU)))
		}
	}
	return nil
}

// unstablePoints lists the run's points that did not settle, in order
// (a search's probes aside, as Summarize leaves them out).
func unstablePoints(run *result.Run) []string {
	var out []string
	for _, p := range run.Points {
		if p.Status == result.PointUnstable && p.Search == "" {
			out = append(out, p.ID)
		}
	}
	return out
}

// notRecorded refuses a run the history already holds: the same result
// file recorded twice would count one job as two and shrink the job-to-job
// spread the gate relies on. Runs without an id are matched by their start
// time, source and figures.
func (f *File) notRecorded(run *result.Run) error {
	var entry *Run
	for _, id := range f.TestbedIDs() {
		for _, r := range f.Testbeds[id].Runs {
			same := run.RunID != "" && r.RunID == run.RunID
			if run.RunID == "" || r.RunID == "" {
				if entry == nil {
					e := Summarize(run)
					entry = &e
				}
				same = r.Started.Equal(run.Started) && r.Source == run.Source && sameFigures(r.Points, entry.Points)
			}
			if same {
				what := "run " + run.RunID
				if run.RunID == "" {
					what = "the run started " + run.Started.UTC().Format(time.RFC3339Nano)
				}
				return failure.Invalid(fmt.Errorf("%s is already recorded (testbed %s, recorded %s); a run is recorded once",
					what, id, r.Recorded.UTC().Format(time.RFC3339)))
			}
		}
	}
	return nil
}

func sameFigures(a, b map[string]*Point) bool {
	if len(a) != len(b) {
		return false
	}
	for id, p := range a {
		q, ok := b[id]
		if !ok || !maps.Equal(p.Summary, q.Summary) || len(p.Trials) != len(q.Trials) {
			return false
		}
		for i := range p.Trials {
			if !maps.Equal(p.Trials[i].Values, q.Trials[i].Values) {
				return false
			}
		}
	}
	return true
}

func (d *Diff) pointChanges(tb *Testbed, entry *Run) {
	known := map[string]bool{}
	for _, id := range tb.PointIDs() {
		known[id] = true
	}
	for id := range entry.Points {
		if !known[id] {
			d.NewPoints = append(d.NewPoints, id)
		}
	}
	if len(tb.Runs) > 0 {
		for id := range tb.Runs[0].Points {
			if entry.Points[id] == nil {
				d.MissingPoints = append(d.MissingPoints, id)
			}
		}
	}
	sort.Strings(d.NewPoints)
	sort.Strings(d.MissingPoints)
}

func (d *Diff) metricChanges(before, after Noise, entry *Run) {
	ids := make([]string, 0, len(entry.Points))
	for id := range entry.Points {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		for _, m := range DiffMetrics {
			vs := entry.Points[id].Values(m)
			if !stats.Positive(vs) {
				continue
			}
			c := MetricChange{Point: id, Metric: m, Run: stats.Median(vs)}
			if e, ok := before[id][m]; ok {
				c.Before, c.MDEBefore = e.Center, e.MDE
			}
			if e, ok := after[id][m]; ok {
				c.MDEAfter = e.MDE
			}
			d.Changes = append(d.Changes, c)
		}
	}
}

// UpdateFile updates the baseline at path under its lock: load (or start
// a new file), Update, call confirm with the diff (e.g. to print it; an
// error aborts without writing), then save atomically.
func UpdateFile(path string, run *result.Run, opts UpdateOptions, confirm func(*Diff) error) (*Diff, error) {
	unlock, err := Lock(path)
	if err != nil {
		return nil, err
	}
	defer unlock()
	f, err := Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		f = New(run.Scenario)
	} else if err != nil {
		return nil, err
	}
	d, err := Update(f, run, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if confirm != nil {
		if err := confirm(d); err != nil {
			return d, err
		}
	}
	if err := Save(path, f); err != nil {
		return d, err
	}
	return d, nil
}

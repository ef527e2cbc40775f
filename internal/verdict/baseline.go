package verdict

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/internal/stats"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Gate defaults.
const (
	// DefaultThroughputTolerance and DefaultLatencyTolerance are the
	// fallback bounds while a baseline has fewer than MinRuns runs.
	DefaultThroughputTolerance = 0.05
	DefaultLatencyTolerance    = 0.10
	// sdFloor is the least job-to-job spread (SD on the log scale) the
	// prediction interval assumes. A history recorded back to back (by
	// calibrate, or coarse imports) sees less variation than separate CI
	// jobs do: on the embedded delay model, five back-to-back runs spread
	// under 0.5% while later unchanged runs moved 1%, and a 0.25% floor
	// gave 2 false alarms in 10 A/A runs. 1% is below the 2% job SD the
	// soundness goals assume, so it does not blunt a calibrated history.
	sdFloor = 0.01
)

// Baseline classifies each gated metric at each point against the run's
// testbed history. With at least MinRuns history runs a new run's
// log-median is held to a one-sided Student-t prediction interval built
// from the history's run log-medians; with fewer, to a percentage
// tolerance widened to three trial CVs. Only "regressed" fails. A history
// recorded on another testbed is not compared: one warning says so.
func (o Options) Baseline(spec *plan.Baseline, base *baseline.File, run *result.Run) []Check {
	o = o.withDefaults()
	if spec == nil || base == nil {
		return nil
	}
	g := gate{spec: *spec, o: o}
	if g.spec.Confidence <= 0 || g.spec.Confidence >= 1 {
		g.spec.Confidence = plan.DefaultConfidence
	}
	if g.spec.MinRuns <= 0 {
		g.spec.MinRuns = plan.DefaultMinRuns
	}
	defaulted := len(g.spec.Metrics) == 0 || g.spec.MetricsDefault
	if len(g.spec.Metrics) == 0 {
		g.spec.Metrics = plan.DefaultGateMetrics()
	}
	tb, id, legacy := base.Lookup(run)
	if tb == nil || len(tb.Runs) == 0 {
		return []Check{noHistory(base, run, id, g.spec.Required)}
	}
	var out []Check
	switch {
	case baseline.PreIdentity(legacy, run):
		out = append(out, Check{Kind: KindBaseline, Key: KeyTestbed, Name: NameNoHistory, Status: StatusWarn,
			Message: fmt.Sprintf("testbed %s: using the history of testbed %s, recorded before perfscen told CPUs apart by family, model and caches: "+
				"same CPU name (%q), cores, memory and server, perhaps another CPU under that name; the next baseline update files it under %s",
				id, legacy, run.Environment.CPU, id)})
	case legacy != "":
		out = append(out, Check{Kind: KindBaseline, Key: KeyTestbed, Name: NameNoHistory, Status: StatusPass,
			Message: fmt.Sprintf("testbed %s: using the history of legacy testbed %s (same hardware and server); the next baseline update files it under %s", id, legacy, id)})
	}
	inRun := map[string]bool{}
	for i := range run.Points {
		p := &run.Points[i]
		if isProbe(p) {
			continue // the search's figure is gated, not the loads it probed
		}
		inRun[p.ID] = true
		for _, m := range gatedMetrics(g.spec.Metrics, p) {
			if defaulted && slices.Contains(plan.DefaultGateIfMeasured(), m) && !measuredBoth(tb, p, m) {
				continue
			}
			out = append(out, g.check(tb, p, m, o.AllowUnstable))
		}
	}
	for _, pid := range tb.PointIDs() {
		if inRun[pid] || tb.Runs[0].Points[pid] == nil {
			continue
		}
		for _, m := range historyMetrics(g.spec.Metrics, tb.Runs[0].Points[pid]) {
			if defaulted && slices.Contains(plan.DefaultGateIfMeasured(), m) {
				continue
			}
			out = append(out, Check{Kind: KindBaseline, Key: baselineKey(m), Name: gateName(m), Model: tb.Runs[0].Points[pid].Model,
				Point: pid, Metric: m, Class: ClassMissing, Status: StatusWarn, NRef: tb.Series(pid, m).K(), NoValue: true,
				Message: "in the baseline but not measured in this run"})
		}
	}
	familyCorrect(out, o.spend(1-g.spec.Confidence), o.spend(o.FamilyAlpha))
	for i := range out {
		thinTail(&out[i], run)
		disturbed(&out[i], tb, run)
		doubted(&out[i], run)
		tooBusyBand(&out[i], run)
		g.notGated(&out[i])
	}
	return out
}

// measuredBoth says whether metric was measured at p in this run and
// in the latest history run: a default metric that only some servers
// have is gated where both sides have it.
func measuredBoth(tb *baseline.Testbed, p *result.Point, metric string) bool {
	if _, ok := p.Figure(metric); !ok {
		return false
	}
	return tb.Series(p.ID, metric).K() > 0
}

// gatedMetrics are the metrics the gate holds p to: a search's result
// point is gated on the value it found, whatever the scenario lists for
// the sweep's points.
func gatedMetrics(metrics []string, p *result.Point) []string {
	if isSearched(p) {
		if p.Summary.MaxRequestRate != nil {
			return []string{plan.MetricMaxRequestRate}
		}
		return []string{plan.MetricMaxConcurrency}
	}
	var out []string
	for _, m := range metrics {
		if !plan.IsSearchMetric(m) {
			out = append(out, m)
		}
	}
	return out
}

// historyMetrics is gatedMetrics for a point recorded in the history.
func historyMetrics(metrics []string, p *baseline.Point) []string {
	for _, m := range []string{plan.MetricMaxConcurrency, plan.MetricMaxRequestRate} {
		if _, ok := p.Summary[m]; ok {
			return []string{m}
		}
	}
	return gatedMetrics(metrics, &result.Point{})
}

// target is the smallest change a baseline check of metric exists to
// catch: the scenario's tolerance for it, else the default tolerance the
// gate falls back to (5% throughput, 10% otherwise).
func (g gate) target(metric string) float64 {
	if t, ok := g.spec.Tolerances[metric]; ok && t != 0 {
		return math.Abs(t)
	}
	if mi, _ := plan.LookupMetric(metric); mi.HigherBetter {
		return DefaultThroughputTolerance
	}
	return DefaultLatencyTolerance
}

// notGated turns a baseline check that passed without being able to see
// the change it exists to catch into StatusNotGated: its detectable change
// (MDE) is larger than its target, or its history supports no bound at
// all. A pass it could not have failed is no pass. Failures and undecided
// checks keep their status: they saw something. An improvement does not:
// it says nothing of whether a drop of the target's size would have been
// seen (at load ~10, against a history recorded in a slower spell, a 10%
// slower build's throughput read +73% "improved" with a detectable change
// of 86%, and the run passed on that check alone).
func (g gate) notGated(c *Check) {
	if c.Kind != KindBaseline || c.Key == KeyTestbed {
		return
	}
	if c.Status != StatusPass && c.Status != StatusWarn {
		return
	}
	c.Target = g.target(c.Metric)
	var why string
	switch {
	case c.Class == ClassUnstable:
		why = "not gated: " + c.Message
	case c.Uncalibrated || c.MDE > 1:
		why = "not gated: testbed noise hides any change under 100%"
	case c.MDE > c.Target*(1+1e-9):
		why = fmt.Sprintf("not gated: testbed noise hides changes under %.0f%% (the check is meant to catch %s)", math.Ceil(100*c.MDE), pct(c.Target))
	default:
		return
	}
	c.Status = StatusNotGated
	if c.Class == ClassUnstable {
		c.Message = why
	} else {
		c.Message = why + "; " + c.Message
	}
	// The status now says what these warnings said.
	kept := c.Warnings[:0]
	for _, w := range c.Warnings {
		if !strings.HasPrefix(w, "noisy baseline") && !strings.HasPrefix(w, "uncalibrated baseline: the history and this run vary too much") {
			kept = append(kept, w)
		}
	}
	c.Warnings = kept
}

// pct renders a fraction as a percentage without needless decimals.
func pct(f float64) string {
	return strconv.FormatFloat(100*f, 'f', -1, 64) + "%"
}

// NameNoHistory is the display name of the KeyTestbed check.
const NameNoHistory = "baseline testbed"

// noHistory is the check for a run whose testbed has no history: a loud
// warning, or with baseline.required an environment failure (exit 3) —
// in CI an ungated run must not pass as if it had been gated.
func noHistory(base *baseline.File, run *result.Run, id string, required bool) Check {
	c := Check{Kind: KindBaseline, Key: KeyTestbed, Name: NameNoHistory, Status: StatusNotGated, NoValue: true}
	from := run.Environment.TestbedSource
	if from == "" {
		from = "derived"
	}
	var where string
	if len(base.Testbeds) == 0 {
		where = "the baseline holds no runs yet"
	} else {
		where = "the baseline has history only for: " + base.RunCounts()
	}
	c.Message = fmt.Sprintf("NOT GATED: testbed %s (%s) has no baseline history; %s. Figures from different testbeds are never compared. "+
		"Name the testbed with --testbed or PERFSCEN_TESTBED (or baseline.testbed) and record history with: perfscen baseline update --testbed %s",
		id, from, where, id)
	if required {
		c.Status, c.Environment = StatusFail, true
		c.Message += " (baseline.required is set: exit 3)"
	}
	return c
}

type gate struct {
	spec plan.Baseline
	o    Options
}

func gateName(metric string) string { return metric + " vs baseline" }

func (g gate) check(tb *baseline.Testbed, p *result.Point, metric string, allowUnstable bool) Check {
	mi, _ := plan.LookupMetric(metric)
	c := Check{Kind: KindBaseline, Key: baselineKey(metric), Name: gateName(metric), Model: p.Model, Point: p.ID, Metric: metric,
		Unit: mi.Unit, Confidence: g.spec.Confidence, Op: "<="}
	if mi.HigherBetter {
		c.Op = ">="
	}
	hist := tb.Series(p.ID, metric)
	c.NRef = hist.K()
	vals := pointValues(p, metric)
	c.N = len(vals)
	// The scenario may ask for points that never stabilize to be judged on
	// their kept trials: on a busy runner that is every point, and skipping
	// them would leave the gate doing nothing.
	judgeUnstable := p.Status == result.PointUnstable && allowUnstable && len(vals) >= 2
	if judgeUnstable {
		c.Warnings = append(c.Warnings, fmt.Sprintf("point did not stabilize; judged on its %d kept trial(s) (allow_unstable)", len(vals)))
	}
	fig, hasFig := p.Figure(metric)
	switch {
	case !judgeUnstable && (p.Status == result.PointUnstable || p.Status == result.PointFailed || p.Status == result.PointPartial):
		c.Class, c.Status, c.NoValue = ClassUnstable, StatusSkip, true
		if allowUnstable && p.Status == result.PointUnstable {
			c.Status = StatusWarn
		}
		c.Message = fmt.Sprintf("point is %s; not compared with the baseline", p.Status)
		return c
	case hist.K() == 0:
		c.Class, c.Status, c.NoValue = ClassNew, StatusSkip, true
		c.Message = "not in the baseline yet; record it with perfscen baseline update"
		return c
	case !hasFig || !stats.Positive(vals):
		c.Class, c.Status, c.NoValue = ClassUnchanged, StatusSkip, true
		c.Message = fmt.Sprintf("no positive %s data in this run; the baseline gate works on ratios (use a threshold)", metric)
		return c
	}
	// The run's figure is the median of its trials, the same number every
	// report prints for this metric at this point.
	c.Value = fig.Value
	if hist.K() >= g.spec.MinRuns {
		g.predict(&c, hist, vals, mi.HigherBetter)
	} else {
		g.tolerate(&c, hist, vals, mi.HigherBetter)
	}
	return c
}

// TailRequests is how many requests a trial must hold beyond a latency
// percentile for the baseline gate to judge it: a trial's p95 of 95
// requests is its 5th-slowest request and its p99 the slowest, so one
// neighbour's multi-millisecond wake-up delay decides them, and no
// history of such figures tells a slower build from a busier machine (on
// a shared runner they gave the A/A false alarms of docs/statistics.md).
// With 10 requests past the percentile (p95: 200 a trial, p99: 1000) the
// figure is a property of the server again.
const TailRequests = 10

// thinTail turns a baseline check of a request-latency percentile into
// "not gated" when the point's trials hold too few requests for it
// (TailRequests): it reports what it saw, and says how long a window
// would let it gate, but cannot fail.
func thinTail(c *Check, run *result.Run) {
	q, ok := metricQuantile(c.Metric)
	if c.Kind != KindBaseline || !ok || q <= 0.5 || c.NoValue || strings.HasPrefix(c.Metric, "itl_") {
		return
	}
	var p *result.Point
	for i := range run.Points {
		if run.Points[i].ID == c.Point {
			p = &run.Points[i]
		}
	}
	if p == nil {
		return
	}
	var per []float64
	for _, t := range p.Trials {
		per = append(per, float64(t.Metrics.Requests))
	}
	if len(per) == 0 {
		return
	}
	have := stats.Median(per)
	need, beyond := tailRequests(q)
	if have >= float64(need) {
		return
	}
	c.Class, c.Status, c.Disturbed = ClassUnchanged, StatusNotGated, false
	c.Message = fmt.Sprintf("not gated: a trial's %s of %.0f requests rests on its %.0f slowest; it needs %d requests a trial to gate (lengthen measurement.window); %s",
		c.Metric, have, math.Max(beyond(have), 1), need, c.Message)
}

// tailRequests is how many requests a trial needs for TailRequests of
// them to lie beyond quantile q, and how many of n lie beyond it. Both
// are computed on q in thousandths, exactly: in floating point 1 - 0.9 is
// 0.09999999999999998, and p90 needed 101 requests, not 100, while a
// trial of 100 "rested on its 9 slowest".
func tailRequests(q float64) (need int, beyond func(n float64) float64) {
	tail := 1000 - int(math.Round(q*1000)) // thousandths past q: p90 → 100
	need = (TailRequests*1000 + tail - 1) / tail
	return need, func(n float64) float64 { return math.Floor(n * float64(tail) / 1000) }
}

// pointValues are per-trial values, or the summary alone for imported
// points without trials.
func pointValues(p *result.Point, metric string) []float64 {
	vs, _ := trialValues(p, metric)
	if len(p.Trials) == 0 {
		if v, ok := p.Summary.Value(metric); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// predict applies the prediction interval. History log-medians vary by
// job noise plus the within-run error of a median of the history's trial
// count; the new run's log-median varies by job noise plus its own
// within-run error. So Var(new − mean) = s²(1+1/K) + (se_new² − se_hist²),
// the last term counted only when the new run is the noisier one.
//
// That last term is the only part more trials of this run can shrink, so
// it decides the three ways: beyond the limit with it counted is a
// regression; within the limit even without it (as if this run were as
// precise as the history's) is a pass; in between, the run's own trial
// noise is what keeps the gate from deciding, and the check is
// inconclusive until more trials settle it.
func (g gate) predict(c *Check, hist baseline.Series, vals []float64, higherBetter bool) {
	k := hist.K()
	mean, s := stats.MeanSD(hist.LogMedians())
	sdLog := hist.PooledSDLog()
	if len(vals) >= 2 {
		sdLog = stats.LogSD(vals)
	}
	seNew := stats.LogMedianSE(sdLog, len(vals))
	seHist := hist.WithinSE()
	vHist := s * s * (1 + 1/float64(k))
	extra := math.Max(seNew*seNew-seHist*seHist, 0)
	sd, sdMin := math.Sqrt(vHist+extra), math.Sqrt(vHist)
	if sd < sdFloor {
		sd = sdFloor
		c.Warnings = append(c.Warnings, fmt.Sprintf("history varies less than separate CI jobs do; assuming %.2g%% run-to-run spread", 100*sdFloor))
	}
	sdMin = math.Max(sdMin, sdFloor)
	alpha := g.o.spend(1 - c.Confidence)
	c.Confidence = 1 - alpha
	tc := stats.TQuantile(c.Confidence, k-1)
	d := math.Log(c.Value) - mean
	c.Method = "prediction-interval"
	c.Effect = math.Expm1(d)
	c.Lo, c.Hi = math.Expm1(d-tc*sd), math.Expm1(d+tc*sd)
	c.MDE = stats.MDE(sd, k, c.Confidence, stats.DefaultPower)
	dir := 1.0 // +1: an increase is worse
	if higherBetter {
		dir = -1
	}
	c.logMean, c.logSD, c.dir = mean, sd, dir
	if t, ok := g.spec.Tolerances[c.Metric]; ok {
		c.tol = math.Abs(t)
	}
	c.Center = math.Exp(mean)
	limit := math.Exp(mean + dir*tc*sd) // the side a regression crosses
	c.Bound = limit
	c.P = 1 - stats.TCDF(dir*d/sd, k-1)
	switch w := dir * d; {
	case w > tc*sd:
		c.Class, c.Status = ClassRegressed, StatusFail
	case -w > tc*sd:
		c.Class, c.Status = ClassImproved, StatusPass
	case w > tc*sdMin:
		c.Class, c.Status = ClassUndecided, StatusInconclusive
		c.NeedN = baselineNeed(w, stats.TQuantile(1-g.o.lastLookAlpha(alpha), k-1), vHist, seHist, sdLog)
	default:
		c.Class, c.Status = ClassUnchanged, StatusPass
	}
	c.histLimit, c.trialCV, c.look = math.Exp(mean+dir*tc*sdMin), stats.CV(vals), g.o.lookNote()
	// A tolerance the scenario states is the smallest change that matters
	// to its owner: a statistically clear change inside it is reported,
	// not failed. A short or back-to-back history underestimates job noise,
	// and this keeps such a history from failing builds over trifles.
	if t, ok := g.spec.Tolerances[c.Metric]; ok && t != 0 && (c.Class == ClassRegressed || c.Class == ClassUndecided) && math.Abs(c.Effect) < math.Abs(t) {
		c.Class, c.Status = ClassUnchanged, StatusPass
		c.Warnings = append(c.Warnings, fmt.Sprintf("beyond the %s%% prediction limit %s, but within the scenario's %s tolerance",
			numfmt.Significant(100*c.Confidence, 3), numfmt.Value(limit, c.Unit), numfmt.Percent(math.Abs(t))))
	}
	// The bound shown is the one the check was held to: the prediction
	// limit, or the tolerance where that is the more lenient.
	c.setBound(alpha)
	c.Message = c.predictionMessage()
	switch {
	case c.MDE > numfmt.MaxMDE:
		c.Uncalibrated = true
		c.Warnings = append(c.Warnings, "uncalibrated baseline: the history and this run vary too much to detect any change under 100%; record more runs on a quieter testbed")
	case c.MDE > 0.10:
		c.Warnings = append(c.Warnings, fmt.Sprintf("noisy baseline: only changes above %s are reliably detected", numfmt.HistoryMDE(c.MDE)))
	}
}

// setBound sets the effective bound of a prediction-interval check held
// at level alpha: the limit the history sets at that level, or the
// scenario's tolerance around the history's centre where that lies
// further out, since a change must cross both to fail.
func (c *Check) setBound(alpha float64) {
	b := math.Exp(c.logMean + c.dir*stats.TQuantile(1-alpha, c.NRef-1)*c.logSD)
	c.boundByTolerance = false
	if c.tol != 0 {
		if tb := math.Exp(c.logMean) * (1 + c.dir*c.tol); c.dir*(tb-b) > 0 {
			b, c.boundByTolerance = tb, true
		}
	}
	c.Bound = b
}

// predictionMessage says what a prediction-interval check found, with
// the bound it was held to in the unit of its metric: the same figure the
// reports print in the bound column.
func (c *Check) predictionMessage() string {
	bound := numfmt.Value(c.Bound, c.Unit)
	if c.boundByTolerance {
		bound += " from the scenario's " + numfmt.Percent(c.tol) + " tolerance"
	}
	if c.Status == StatusInconclusive {
		return fmt.Sprintf("inconclusive: %s vs history of %d run(s): beyond the limit the history alone sets (%s) but within the bound this run's trial noise (%s CV over %d trials) allows (%s); detectable change %s%s",
			numfmt.SignedPct(c.Effect), c.NRef, numfmt.Value(c.histLimit, c.Unit), numfmt.Pct(c.trialCV), c.N, bound, numfmt.HistoryMDE(c.MDE), needText(c.NeedN, "in this run"))
	}
	return fmt.Sprintf("%s vs history of %d run(s) (bound %s, %s%s, detectable change %s)",
		numfmt.SignedPct(c.Effect), c.NRef, bound, numfmt.PEq("p", c.P), c.look, numfmt.HistoryMDE(c.MDE))
}

// baselineNeed is about how many trials this run would need for its own
// trial noise to stop hiding a change of w (log scale) at the limit t·sd:
// se_new² < (w/t)² − vHist + seHist². 0 when no count would do.
func baselineNeed(w, t, vHist, seHist, sdLog float64) int {
	room := (w/t)*(w/t) - vHist + seHist*seHist
	per := stats.LogMedianSE(sdLog, 4) * 2 // the median's SE for one trial's worth of data
	if room <= 0 || !(per > 0) {
		return 0
	}
	n := math.Ceil(per * per / room)
	if n > 1e6 {
		return 0
	}
	return int(n)
}

// tolerate is the fallback for a short history: a fixed relative
// tolerance, widened to three trial CVs so trial noise alone rarely trips it.
func (g gate) tolerate(c *Check, hist baseline.Series, vals []float64, higherBetter bool) {
	k := hist.K()
	mean, _ := stats.MeanSD(hist.LogMedians())
	center := math.Exp(mean)
	c.Center = center
	tol := DefaultLatencyTolerance
	if higherBetter {
		tol = DefaultThroughputTolerance
	}
	if t, ok := g.spec.Tolerances[c.Metric]; ok && t != 0 {
		tol = math.Abs(t)
	}
	cv := math.Max(hist.TrialCV(), stats.CV(vals))
	eff := math.Max(tol, 3*cv)
	c.Method = "tolerance"
	c.Effect = c.Value/center - 1
	c.MDE = eff
	c.Lo, c.Hi = c.Effect-eff, c.Effect+eff
	if eff >= 1 {
		// A band of ±100% or more is no interval the data supports.
		c.Lo, c.Hi, c.Uncalibrated = 0, 0, true
	}
	if eff < 1 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("uncalibrated baseline (%d run(s) < %d): using a ±%s tolerance instead of a prediction interval", k, g.spec.MinRuns, numfmt.Pct(eff)))
	} else {
		// A band of ±100% or more is no figure worth printing.
		c.Warnings = append(c.Warnings, fmt.Sprintf("uncalibrated baseline (%d run(s) < %d): the trials vary too much for a tolerance band (%.0f%% CV)", k, g.spec.MinRuns, 100*cv))
	}
	dir := 1.0
	if higherBetter {
		dir = -1
	}
	c.Bound = center * (1 + dir*eff) // the side a regression crosses
	if higherBetter && eff >= 1 {
		// A band reaching zero throughput cannot fail anything: say the
		// gate is uncalibrated rather than pass a drop of any size.
		c.Bound, c.MDE, c.Lo, c.Hi = 0, 0, 0, 0
		c.Class, c.Status, c.Uncalibrated = ClassUnchanged, StatusWarn, true
		c.Message = fmt.Sprintf("uncalibrated: %s vs history of %d run(s), but trials vary %s (CV), too much for a tolerance gate; record more runs on a quieter testbed", numfmt.SignedPct(c.Effect), k, numfmt.Decimal(100*cv, 0)+"%")
		return
	}
	switch {
	case dir*c.Effect > eff:
		c.Class, c.Status = ClassRegressed, StatusFail
	case -dir*c.Effect > eff:
		c.Class, c.Status = ClassImproved, StatusPass
	default:
		c.Class, c.Status = ClassUnchanged, StatusPass
	}
	c.Message = fmt.Sprintf("%s vs history of %d run(s) (tolerance ±%s, bound %s)", numfmt.SignedPct(c.Effect), k, numfmt.Pct(eff), numfmt.Value(c.Bound, c.Unit))
}

// familyCorrect keeps the chance of any false regression per run at most
// family while each check stays at its own level: prediction-interval
// regressions stand only if Holm's procedure at the family level, with
// every step capped at the per-check level, rejects them too.
func familyCorrect(cs []Check, perCheck, family float64) {
	var idx []int
	for i, c := range cs {
		if c.Method == "prediction-interval" {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return cs[idx[a]].P < cs[idx[b]].P })
	m := len(idx)
	stopped := false
	stopLevel := perCheck
	for j, i := range idx {
		level := math.Min(perCheck, family/float64(m-j))
		if !stopped && cs[i].P <= level {
			continue
		}
		if !stopped {
			stopped, stopLevel = true, level
		}
		c := &cs[i]
		if c.Class == ClassRegressed {
			c.Class, c.Status = ClassUnchanged, StatusPass
			c.Warnings = append(c.Warnings, fmt.Sprintf("beyond the %s%% limit, but not significant after correcting for %d gated metric(s)", numfmt.Significant(100*c.Confidence, 3), m))
		}
		// From the first check Holm keeps, every later one was held to
		// that step's level: its bound is the limit at that level.
		if stopLevel < perCheck {
			c.setBound(stopLevel)
		}
		c.Message = c.predictionMessage()
	}
}

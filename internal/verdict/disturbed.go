package verdict

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner/plan"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/result"
)

// How much more disturbed than every baseline run a run must have been
// for a regression to be put down to the testbed rather than the build.
//
// Other processes' CPU: a quarter of a core more (12.5 percentage points
// of a 2-core runner, 1.6 of a 16-core machine), never below
// minDisturbedMargin so scheduler noise on a large machine is not taken
// for a neighbour. This share saturates on a machine that is already
// full: at 95% a hog can add only 5 points.
//
// perfscen's own run-queue wait (per unit of its run time) does not
// saturate: each more runnable neighbour lengthens the queue its threads
// wait in. Its window-to-window spread at one load is wide (a few
// scheduler ticks decide it), so the margin is relative and generous:
// half as much again as the busiest baseline run, plus WaitSlack so a
// history of near-zero waits is not beaten by a few milliseconds.
//
// CPU pressure (the share of time some task waited for a CPU, machine
// wide) also saturates, and only a large rise counts.
const (
	DisturbedCores     = 0.25
	minDisturbedMargin = 0.02
	// fallbackMargin applies when the run does not say how many CPUs the
	// machine has.
	fallbackMargin = 0.10

	WaitFactor     = 1.5
	WaitSlack      = 0.10
	PressureMargin = 0.25
)

func disturbedMargin(numCPU int) float64 {
	if numCPU <= 0 {
		return fallbackMargin
	}
	return max(DisturbedCores/float64(numCPU), minDisturbedMargin)
}

// DisturbedBy names each signal by which a point's trials (now) were
// markedly more disturbed than the busiest baseline run (most), with both
// figures; nil when none was.
//
// perfscen's own run-queue wait decides alone where both sides recorded
// it: it is the contention the client and the embedded server actually
// met. The machine-wide signals are too eager on a half-idle machine (a
// neighbour using a third of the CPUs need not delay a client that uses a
// tenth of one: real 10% slowdowns measured next to such a neighbour were
// excused as disturbed) and blind on a full one; they decide only without
// the wait (a kernel without schedstats, a history recorded before it). A
// signal that either side did not record cannot vouch for a quiet
// baseline, so it is not used.
func DisturbedBy(now, most baseline.Contention, numCPU int) []string {
	if now.HaveWait && most.HaveWait {
		if now.Wait >= WaitFactor*most.Wait+WaitSlack {
			return []string{fmt.Sprintf("perfscen's threads waited %.0f%% of their CPU time in the run queue vs ≤%.0f%%", 100*now.Wait, 100*most.Wait)}
		}
		return nil
	}
	var out []string
	if now.HaveOtherCPU && most.HaveOtherCPU && now.OtherCPU >= most.OtherCPU+disturbedMargin(numCPU) {
		out = append(out, fmt.Sprintf("%.0f%% vs ≤%.0f%% CPU used by other processes", 100*now.OtherCPU, 100*most.OtherCPU))
	}
	if now.HavePressure && most.HavePressure && now.Pressure >= most.Pressure+PressureMargin {
		out = append(out, fmt.Sprintf("CPU pressure %.0f%% vs ≤%.0f%% of the time", 100*now.Pressure, 100*most.Pressure))
	}
	return out
}

// WakeupsPerRequest is how many wake-ups the machine estimate assumes on
// a request's path: the server's thread when the request lands, the
// model's (after a sleep, a lock or a hand-off), the server's writer and
// the client's reader when the reply lands (machine.go). An assumption,
// stated with the estimate's measured behaviour in docs/statistics.md.
const WakeupsPerRequest = 4

// explanation is how much of a check's change a busier machine than the
// baseline's could account for.
type explanation struct {
	// abs is the machine's estimated share of the check's value (its
	// unit), for latency-like metrics; rel its relative share, for the
	// others. Both zero: nothing explained.
	abs, rel float64
	why      string
	// legacy: rel is the older signals' stretch factor less one.
	legacy bool
}

// explain estimates what the machine could have done to c's metric at p
// since the baseline (machine.go): with the wake-up probe on both sides,
// the counterfactual of the wake-up delays plus the server's measured
// run-queue and CPU-speed stretch; without it, the older signals' loose
// stretch factors, used only when the margin rule (DisturbedBy) says the
// run was disturbed at all.
func explain(c *Check, p *result.Point, tb *baseline.Testbed, numCPU int) explanation {
	metric := c.Metric
	mi, ok := plan.LookupMetric(metric)
	if !ok || plan.IsSearchMetric(metric) || (mi.Unit != "us" && !mi.HigherBetter && metric != plan.MetricServerCPU) {
		return explanation{}
	}
	switch metric {
	case plan.MetricServerRunQ, plan.MetricServerPreempt, plan.MetricServerWork, plan.MetricServerInstr:
		// The run-queue delay is the contention itself; work and
		// instructions are what contention does not move.
		return explanation{}
	}
	nowC := baseline.PointContention(p)
	most, _ := tb.MaxContention(c.Point)
	ref := busiestRun(tb, c.Point)
	if nowC.HaveWake && most.HaveWake && ref != nil {
		return estimate(c, p, ref, mi)
	}
	why := DisturbedBy(nowC, most, numCPU)
	if len(why) == 0 {
		return explanation{}
	}
	var rel float64
	switch {
	case nowC.HaveWait && most.HaveWait:
		rel = (1+nowC.Wait)/(1+most.Wait) - 1
	case nowC.HaveOtherCPU && most.HaveOtherCPU && nowC.OtherCPU < 1:
		rel = (1-most.OtherCPU)/(1-nowC.OtherCPU) - 1
	default:
		rel = math.Inf(1) // pressure alone bounds nothing: excuse as before
	}
	return explanation{rel: rel, why: strings.Join(why, "; "), legacy: true}
}

// estimate is the machine's share of metric at p against the baseline
// run ref (its busiest), from the wake-up delays and the server's own
// counters (machine.go).
func estimate(c *Check, p *result.Point, ref *baseline.Point, mi plan.MetricInfo) explanation {
	trials := make([]*result.Disturbance, len(p.Trials))
	for i := range p.Trials {
		trials[i] = p.Trials[i].Disturbance
	}
	wNow, okNow := wakeDist(trials)
	thenD := make([]*result.Disturbance, len(ref.Trials))
	hists := make([]string, len(ref.Trials))
	for i := range ref.Trials {
		thenD[i], hists[i] = ref.Trials[i].Disturbance, ref.Trials[i].Histogram
	}
	wThen, okThen := wakeDist(thenD)
	sNow, sThen := serverNow(p), serverThen(ref)
	server, runqRise, speed, preempted := stretch(sNow, sThen, inferencesPerExecution(p))
	m := WakeupsPerRequest
	var parts []string
	if okNow && okThen && wNow.mean > wThen.mean {
		parts = append(parts, fmt.Sprintf("wake-up delays mean %s vs %s", numfmt.Value(wNow.mean, "us"), numfmt.Value(wThen.mean, "us")))
	}
	switch {
	case runqRise > 0 && preempted:
		parts = append(parts, fmt.Sprintf("the server's run-queue delay after preemptions %s vs %s per inference", numfmt.Value(sNow.preempt, "us"), numfmt.Value(sThen.preempt, "us")))
	case runqRise > 0:
		parts = append(parts, fmt.Sprintf("the server's run-queue delay %s vs %s per inference", numfmt.Value(sNow.runq, "us"), numfmt.Value(sThen.runq, "us")))
	}
	if speed > 1 {
		parts = append(parts, fmt.Sprintf("its CPU %s slower", numfmt.Percent(speed-1)))
	}
	seed := seedOf(c.Point, c.Metric)
	delays := func(q float64, withLatency bool) float64 {
		if !okNow || !okThen {
			return 0
		}
		var lat *dist
		if withLatency {
			if d, ok := latencyDist(hists); ok {
				lat = &d
			}
		}
		return max(delayShift(lat, wNow, wThen, m, q, seed), 0)
	}
	var e explanation
	switch q, isQ := metricQuantile(c.Metric); {
	case c.Metric == plan.MetricServerCPU:
		// CPU time moves with the CPU's speed alone.
		e.rel = speed - 1
	case strings.HasPrefix(c.Metric, "server_compute_"):
		e.abs = server
	case c.Metric == plan.MetricServerQueue:
		// Queued requests wait out the executions ahead of them, each
		// stretched, and one wake-up of the scheduler.
		e.abs = server*float64(max(p.Concurrency-1, 1)) + delays(0, false)/float64(m)
	case mi.HigherBetter:
		avg, _ := p.Figure(plan.MetricLatencyAvg)
		if avg.Value > 0 {
			e.rel = min((delays(0, false)+server)/avg.Value, 1)
		}
	case isQ && (c.Metric == plan.MetricP50 || c.Metric == plan.MetricP90 || c.Metric == plan.MetricP95 || c.Metric == plan.MetricP99 || c.Metric == plan.MetricLatencyMax):
		e.abs = delays(q, true) + server
	case isQ:
		// LLM times: no histogram of them is kept, so the delays alone.
		e.abs = delays(q, false) + server
	default:
		e.abs = delays(0, false) + server
	}
	if (e.abs <= 0 && e.rel <= 0) || len(parts) == 0 {
		return explanation{}
	}
	e.why = "estimated from " + strings.Join(parts, ", ")
	return e
}

// metricQuantile is the latency quantile a metric names (p95 → 0.95,
// ttft_p99 → 0.99); ok is false for means and the rest.
func metricQuantile(metric string) (float64, bool) {
	if metric == plan.MetricLatencyMax || strings.HasSuffix(metric, "_max") {
		return 0.999, true
	}
	i := strings.LastIndexByte(metric, 'p')
	if i < 0 || (i > 0 && metric[i-1] != '_') {
		return 0, false
	}
	switch metric[i+1:] {
	case "50":
		return 0.5, true
	case "90":
		return 0.9, true
	case "95":
		return 0.95, true
	case "99":
		return 0.99, true
	}
	return 0, false
}

// excuses says whether e accounts for all of c's change beyond its bound:
// the value, less what the machine could have done to it, is within it.
func (e explanation) excuses(c *Check) bool {
	higher := c.Op == ">="
	switch {
	case e.why == "":
		return false
	case math.IsInf(e.rel, 1):
		return true
	case e.legacy && higher:
		return c.Value*(1+e.rel) >= c.Bound
	case e.legacy:
		return c.Value/(1+e.rel) <= c.Bound
	case higher:
		// Requests took up to rel of the mean latency longer, so a closed
		// loop's throughput was at most rel lower than undisturbed.
		return e.rel >= 1 || c.Value/(1-e.rel) >= c.Bound
	case e.rel > 0:
		// A figure stretched by a factor (CPU time on a slower CPU).
		return c.Value/(1+e.rel) <= c.Bound
	default:
		return c.Value-e.abs <= c.Bound
	}
}

// size renders what e could add to c's value, for messages.
func (e explanation) size(c *Check) string {
	switch {
	case math.IsInf(e.rel, 1):
		return "any change"
	case e.abs > 0:
		return "+" + numfmt.Value(e.abs, c.Unit)
	}
	return numfmt.Pct(e.rel) // one decimal, as the change it is set against
}

// disturbed turns a regression (or an undecided check) into
// "inconclusive: testbed disturbed" when the machine was busier than in
// every baseline run by enough to account for the whole change beyond the
// bound: the data cannot then tell a slower build from a busier machine.
// A change larger than the disturbance can explain stays a regression,
// and says what the disturbance could have accounted for.
func disturbed(c *Check, tb *baseline.Testbed, run *result.Run) {
	if c.Kind != KindBaseline || (c.Class != ClassRegressed && c.Class != ClassUndecided) {
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
	_, n := tb.MaxContention(c.Point)
	e := explain(c, p, tb, run.Environment.NumCPU)
	if e.why == "" {
		return
	}
	amount := "could account for " + e.size(c) + " at most"
	if !e.legacy {
		amount = "accounts for about " + e.size(c) + " by estimate"
	}
	if !e.excuses(c) {
		if c.Class == ClassRegressed {
			c.Warnings = append(c.Warnings, fmt.Sprintf("the testbed was busier than in the %d baseline run(s) (%s), which %s; this change is larger",
				n, e.why, amount))
		}
		return
	}
	c.Class, c.Status, c.Disturbed = ClassUndecided, StatusInconclusive, true
	c.Message = fmt.Sprintf("inconclusive: testbed disturbed (%s, against the %d baseline run(s); the machine %s, as much as this change beyond its bound); %s",
		e.why, n, amount, c.Message)
}

// imbalance warns when one arm's windows ran on a markedly more disturbed
// machine than the other's: interleaving is meant to share disturbance
// alike, and when it did not, the ratio carries some of the machine's load.
func imbalance(cand, ref *result.Point) string {
	a, b := baseline.PointContention(cand), baseline.PointContention(ref)
	var why []string
	if a.HaveOtherCPU && b.HaveOtherCPU && max(a.OtherCPU-b.OtherCPU, b.OtherCPU-a.OtherCPU) >= fallbackMargin {
		why = append(why, fmt.Sprintf("other processes used %.0f%% of the CPUs during the candidate's windows and %.0f%% during the reference's", 100*a.OtherCPU, 100*b.OtherCPU))
	}
	if a.HaveWait && b.HaveWait && (a.Wait >= WaitFactor*b.Wait+WaitSlack || b.Wait >= WaitFactor*a.Wait+WaitSlack) {
		why = append(why, fmt.Sprintf("perfscen's threads waited %.0f%% of their CPU time in the run queue during the candidate's windows and %.0f%% during the reference's", 100*a.Wait, 100*b.Wait))
	}
	if len(why) == 0 {
		return ""
	}
	return "arms disturbed unequally: " + strings.Join(why, "; ")
}

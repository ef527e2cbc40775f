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

// WakeupsPerRequest is how many wake-ups the disturbance rule assumes on
// a request's path: the server's thread when the request lands, the
// model's (after a sleep, a lock or a hand-off), the server's writer and
// the client's reader when the reply lands. A neighbour delays each of
// them by the wake-up delay the probe measures at that moment. By the
// union bound, the sum of m delays exceeds m·D(1−(1−q)/m) with
// probability at most 1−q, so m times that quantile's rise bounds the rise
// of a latency's q-quantile the machine alone can cause; and m times the
// rise of the mean delay bounds the rise of the mean latency. Measured
// against a delay model next to a neighbour busy 40 ms of every 100 ms on
// each core, with and without a hog (docs/statistics.md), 4 covered every
// unchanged run's shift in throughput, p50, p95 and p99, while the bound
// for p50 stayed under 1% — so a 10% slowdown is still seen there.
const WakeupsPerRequest = 4

// explanation is how much of a check's change a rise in disturbance over
// the busiest baseline run could account for.
type explanation struct {
	// abs is the largest rise of the check's value (its unit) the machine
	// could cause, for latency-like metrics; rel the largest relative
	// worsening, for the others. Both zero: nothing explained.
	abs, rel float64
	why      string
	// legacy: rel is the older signals' stretch factor less one.
	legacy bool
}

// explain measures what a point's disturbance (now) could do to metric
// against the busiest history run (most). With the wake-up probe on both
// sides it is the probe's rise times WakeupsPerRequest at the matching
// quantile; without it, the older signals bound a CPU-bound path: a run
// queue wait w per unit of CPU stretches CPU time by 1+w, and other
// processes taking a share u of the CPUs leave 1−u — loose bounds, used
// only when the margin rule (DisturbedBy) says the run was disturbed at
// all. avgUs is the point's mean latency, for throughput-like metrics.
func explain(metric string, now, most baseline.Contention, numCPU int, avgUs float64) explanation {
	mi, ok := plan.LookupMetric(metric)
	if !ok || plan.IsSearchMetric(metric) || (mi.Unit != "us" && !mi.HigherBetter) {
		return explanation{}
	}
	if now.HaveWake && most.HaveWake {
		m := float64(WakeupsPerRequest)
		q, isQuantile := metricQuantile(metric)
		if mi.HigherBetter || !isQuantile {
			d := m * max(now.Wake.Mean-most.Wake.Mean, 0)
			if d <= 0 {
				return explanation{}
			}
			why := fmt.Sprintf("mean wake-up delay %s vs ≤%s", numfmt.Value(now.Wake.Mean, "us"), numfmt.Value(most.Wake.Mean, "us"))
			if mi.HigherBetter {
				if !(avgUs > 0) {
					return explanation{}
				}
				return explanation{rel: min(d/avgUs, 1), why: why}
			}
			return explanation{abs: d, why: why}
		}
		qq := 1 - (1-q)/m
		a, b := now.Wake.At(qq), most.Wake.At(qq)
		if a <= b {
			return explanation{}
		}
		return explanation{abs: m * (a - b), why: fmt.Sprintf("wake-up delay at its %s quantile %s vs ≤%s",
			numfmt.Significant(100*qq, 4)+"%", numfmt.Value(a, "us"), numfmt.Value(b, "us"))}
	}
	why := DisturbedBy(now, most, numCPU)
	if len(why) == 0 {
		return explanation{}
	}
	var rel float64
	switch {
	case now.HaveWait && most.HaveWait:
		rel = (1+now.Wait)/(1+most.Wait) - 1
	case now.HaveOtherCPU && most.HaveOtherCPU && now.OtherCPU < 1:
		rel = (1-most.OtherCPU)/(1-now.OtherCPU) - 1
	default:
		rel = math.Inf(1) // pressure alone bounds nothing: excuse as before
	}
	return explanation{rel: rel, why: strings.Join(why, "; "), legacy: true}
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
	most, n := tb.MaxContention(c.Point)
	avg, _ := p.Figure(plan.MetricLatencyAvg)
	e := explain(c.Metric, baseline.PointContention(p), most, run.Environment.NumCPU, avg.Value)
	if e.why == "" {
		return
	}
	if !e.excuses(c) {
		if c.Class == ClassRegressed {
			c.Warnings = append(c.Warnings, fmt.Sprintf("the testbed was busier than in the %d baseline run(s) (%s), which could account for %s at most; this change is larger",
				n, e.why, e.size(c)))
		}
		return
	}
	c.Class, c.Status, c.Disturbed = ClassUndecided, StatusInconclusive, true
	c.Message = fmt.Sprintf("inconclusive: testbed disturbed (%s, in the %d baseline run(s); that could account for %s, as much as this change beyond its bound); %s",
		e.why, n, e.size(c), c.Message)
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

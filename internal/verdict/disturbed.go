package verdict

import (
	"fmt"
	"strings"

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

// disturbed turns a regression (or an undecided check) measured while the
// machine was markedly more disturbed than in every baseline run into
// "inconclusive: testbed disturbed": the data cannot tell a slower build
// from a busier machine.
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
	why := DisturbedBy(baseline.PointContention(p), most, run.Environment.NumCPU)
	if len(why) == 0 {
		return
	}
	c.Class, c.Status, c.Disturbed = ClassUndecided, StatusInconclusive, true
	c.Message = fmt.Sprintf("inconclusive: testbed disturbed (%s, in the %d baseline run(s)); %s", strings.Join(why, "; "), n, c.Message)
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

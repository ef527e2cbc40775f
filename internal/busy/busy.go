// Package busy says, from the contention perfscen records for every
// measurement window (result.Disturbance), whether the machine was too
// busy to measure on, and whether some windows were markedly busier than
// others. It is the one rule behind "the machine was too busy for point X
// to settle" (an unstable point, a history that cannot be recorded) and
// behind a search's probe whose abort_on stop is not a judgement on the
// build because the machine was disturbed when it tripped.
//
// It works on medians over windows, signal by signal, and uses a signal
// only where the windows recorded it: kernels and containers differ in
// what they show.
package busy

import (
	"fmt"
	"strings"

	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/internal/stats"
	"github.com/perfscen/perfscen/runner/result"
)

// Summary is the contention of a set of windows: the median over them of
// each signal, each with whether any window recorded it.
type Summary struct {
	// Windows is how many windows recorded a disturbance.
	Windows int
	// Others is the share of all CPUs other processes used, the
	// hypervisor's steal included: what perfscen could not have.
	Others float64
	// Load1 is the 1-minute load average (perfscen's own runnable threads
	// count in it too).
	Load1 float64
	// Wait is perfscen's own run-queue wait per unit of its CPU time.
	Wait     float64
	HaveWait bool
	// WakeP99 is the 99th percentile of the wake-up delays (µs).
	WakeP99  float64
	HaveWake bool
}

// Of summarizes the recorded disturbances of some windows; ok is false
// when none recorded one.
func Of(ds []*result.Disturbance) (s Summary, ok bool) {
	var others, load, wait, wake []float64
	for _, d := range ds {
		if d == nil {
			continue
		}
		others = append(others, min(d.OtherCPU+d.Steal, 1))
		load = append(load, d.Load1)
		if d.RunQueueWait != nil {
			wait = append(wait, *d.RunQueueWait)
		}
		if w := d.WakeupDelay; w != nil && len(w.Quantiles) == len(result.WakeupQuantiles) {
			wake = append(wake, w.Quantiles[wakeP99])
		}
	}
	if len(others) == 0 {
		return Summary{}, false
	}
	s = Summary{Windows: len(others), Others: stats.Median(others), Load1: stats.Median(load)}
	if len(wait) > 0 {
		s.Wait, s.HaveWait = stats.Median(wait), true
	}
	if len(wake) > 0 {
		s.WakeP99, s.HaveWake = stats.Median(wake), true
	}
	return s, true
}

// Windows summarizes a point's measured windows, stabilization included:
// the windows in which it tried to settle.
func Windows(p *result.Point) (Summary, bool) {
	ds := make([]*result.Disturbance, 0, len(p.Windows))
	for i := range p.Windows {
		ds = append(ds, p.Windows[i].Disturbance)
	}
	return Of(ds)
}

// wakeP99 is the index of the 99th percentile in result.WakeupQuantiles.
const wakeP99 = 5

// The thresholds of TooBusy. Other processes' CPU is the one signal that
// is the neighbours' alone; the load average, perfscen's run-queue wait
// and the wake-up delays also grow with perfscen's own threads (a high
// concurrency on two cores queues the client behind the embedded server),
// so they only confirm a share of other work that is already large.
const (
	// TooBusyOthers: other processes (and steal) used at least half of
	// all CPUs: on a 2-core runner, a whole core.
	TooBusyOthers = 0.5
	// TooBusyOthersConfirmed: a quarter of all CPUs is enough when one
	// of the waits below confirms that work contended with perfscen.
	TooBusyOthersConfirmed = 0.25
	// TooBusyLoadPerCPU: two runnable tasks per CPU on average.
	TooBusyLoadPerCPU = 2.0
	// TooBusyWait: perfscen's threads waited half as long as they ran.
	TooBusyWait = 0.5
	// TooBusyWakeP99Us: one wake-up in a hundred waited a millisecond or
	// more for a CPU (tens of µs on a quiet machine).
	TooBusyWakeP99Us = 1000.0
)

// TooBusy says whether windows with contention s were measured on a
// machine too busy for their figures to say anything about the build:
// other processes used at least half of all CPUs, or at least a quarter
// while perfscen's threads or wake-ups waited markedly for a CPU (load
// average at least 2 per CPU, run-queue wait at least half the run time,
// or wake-up delay p99 at least 1 ms). numCPU ≤ 0 leaves the load average
// out.
func (s Summary) TooBusy(numCPU int) bool {
	if s.Windows == 0 {
		return false
	}
	if s.Others >= TooBusyOthers {
		return true
	}
	if s.Others < TooBusyOthersConfirmed {
		return false
	}
	return numCPU > 0 && s.Load1/float64(numCPU) >= TooBusyLoadPerCPU ||
		s.HaveWait && s.Wait >= TooBusyWait ||
		s.HaveWake && s.WakeP99 >= TooBusyWakeP99Us
}

// Text names the contention, for messages: "load average 15.2 on 2 CPUs,
// other processes used 93% of the CPUs, wake-up delay p99 4.10ms,
// perfscen's threads waited for a CPU 80% as long as they ran".
func (s Summary) Text(numCPU int) string {
	load := "load average " + numfmt.Decimal(s.Load1, 1)
	if numCPU > 0 {
		load += fmt.Sprintf(" on %d CPU", numCPU)
		if numCPU != 1 {
			load += "s"
		}
	}
	parts := []string{load, "other processes used " + numfmt.Decimal(100*s.Others, 0) + "% of the CPUs"}
	if s.HaveWake {
		parts = append(parts, "wake-up delay p99 "+numfmt.Micros(s.WakeP99))
	}
	if s.HaveWait {
		parts = append(parts, "perfscen's threads waited for a CPU "+numfmt.Decimal(100*s.Wait, 0)+"% as long as they ran")
	}
	return strings.Join(parts, ", ")
}

// The margins of Above: how much busier than a reference windows must be
// to be called disturbed.
const (
	// AboveOthersCores: other processes used at least a quarter of a core
	// more (as a share of all CPUs), and never less than AboveOthersMin.
	AboveOthersCores = 0.25
	AboveOthersMin   = 0.02
	// AboveWaitFactor, AboveWaitPlus: perfscen's run-queue wait at least
	// 1.5 × the reference's plus 10 points.
	AboveWaitFactor = 1.5
	AboveWaitPlus   = 0.10
	// AboveWakeFactor, AboveWakePlusUs: wake-up delay p99 at least twice
	// the reference's plus half a millisecond.
	AboveWakeFactor = 2.0
	AboveWakePlusUs = 500.0
)

// Above says whether windows with contention s were markedly busier than
// reference windows ref, and names the signals that say so with both
// figures. Only signals both recorded are compared. The load average is
// not used: it lags a minute behind and counts perfscen's own threads,
// which a higher load level multiplies.
func (s Summary) Above(ref Summary, numCPU int) (string, bool) {
	if s.Windows == 0 || ref.Windows == 0 {
		return "", false
	}
	var out []string
	margin := AboveOthersMin
	if numCPU > 0 {
		margin = max(AboveOthersCores/float64(numCPU), AboveOthersMin)
	}
	if s.Others >= ref.Others+margin {
		out = append(out, fmt.Sprintf("other processes used %s%% of the CPUs against %s%%",
			numfmt.Decimal(100*s.Others, 0), numfmt.Decimal(100*ref.Others, 0)))
	}
	if s.HaveWait && ref.HaveWait && s.Wait >= AboveWaitFactor*ref.Wait+AboveWaitPlus {
		out = append(out, fmt.Sprintf("perfscen's run-queue wait %s%% of its run time against %s%%",
			numfmt.Decimal(100*s.Wait, 0), numfmt.Decimal(100*ref.Wait, 0)))
	}
	if s.HaveWake && ref.HaveWake && s.WakeP99 >= AboveWakeFactor*ref.WakeP99+AboveWakePlusUs {
		out = append(out, fmt.Sprintf("wake-up delay p99 %s against %s", numfmt.Micros(s.WakeP99), numfmt.Micros(ref.WakeP99)))
	}
	return strings.Join(out, ", "), len(out) > 0
}

// ABAdvice is what a run that could not measure because the machine was
// too busy suggests instead.
const ABAdvice = "gate with a same-job A/B comparison instead (the base and the candidate as two `servers:` of one scenario, with `comparisons:`; see ci/README.md) or record on a quieter runner"

// NotSettled is the message of a point that did not stabilize on a
// machine too busy for it, as every report says it: "could not measure:
// the machine was too busy for point X to settle in N window(s) (…); gate
// with a same-job A/B comparison instead (…) or record on a quieter
// runner".
func NotSettled(point string, s Summary, numCPU int) string {
	return "could not measure: " + settle(point, s, numCPU)
}

// NotRecorded is the same words where a baseline history cannot record a
// run for that reason.
func NotRecorded(point string, s Summary, numCPU int) string {
	return "could not record: " + settle(point, s, numCPU)
}

func settle(point string, s Summary, numCPU int) string {
	return fmt.Sprintf("the machine was too busy for point %s to settle in %d window(s) (%s); %s",
		point, s.Windows, s.Text(numCPU), ABAdvice)
}

// Unsettled is the contention of a point that did not stabilize, and ok
// says whether the machine was too busy for it then (a point that was
// stable, or unstable on a quiet machine, keeps its own words).
func Unsettled(p *result.Point, numCPU int) (Summary, bool) {
	if p.Status != result.PointUnstable {
		return Summary{}, false
	}
	s, ok := Windows(p)
	if !ok || !s.TooBusy(numCPU) {
		return Summary{}, false
	}
	return s, true
}

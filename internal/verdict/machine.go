package verdict

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/stats"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// The machine's share of a change, estimated. A busy machine makes a
// request slower in two ways perfscen measures:
//
//   - each wake-up on the request's path (the server's thread when the
//     request lands, the model's, the writer's, the client's when the
//     reply lands: WakeupsPerRequest of them) waits for a CPU; the wake-up
//     probe samples those delays, in this run and in the baseline's;
//   - the server's threads wait in the run queue while they compute
//     (time-slicing, which no wake-up shows) and run on a slower CPU
//     (another guest on the core, a lower clock): the server's run-queue
//     delay per inference and the probe's fixed kernel measure those,
//     where the server's process is measured.
//
// Latencies do not add by quantile: a model whose service time varies
// moves its median by much more than the delays' own median when a few
// wake-ups are long. So the estimate is a counterfactual, computed by
// simulation: the baseline's own latency distribution (its busiest run's
// kept trials) plus WakeupsPerRequest draws of this run's delays, against
// the same plus draws of that baseline run's delays, both with the same
// random numbers; the difference of their quantile (or mean) is what the
// rise in wake-up delays alone does to that figure. The server's measured
// run-queue and CPU-speed stretch is added as a shift. It assumes the
// delays are independent of one another and of the service time, that
// WakeupsPerRequest wake-ups sit on the path, and that the probe's delays
// are the path's. It is an estimate, not a bound: docs/statistics.md
// gives its measured behaviour.

// simSamples is how many simulated requests each counterfactual draws:
// enough that the Monte Carlo error of a p99 shift is a few percent of it.
const simSamples = 20000

// dist is a discrete distribution: values in increasing order with
// their cumulative shares.
type dist struct {
	v, cum []float64
	mean   float64
}

// newDist builds a distribution from values and their weights (any order).
func newDist(v, w []float64) (dist, bool) {
	idx := make([]int, 0, len(v))
	total := 0.0
	for i := range v {
		if w[i] > 0 && !math.IsNaN(v[i]) && !math.IsInf(v[i], 0) {
			idx = append(idx, i)
			total += w[i]
		}
	}
	if total <= 0 {
		return dist{}, false
	}
	sort.Slice(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	d := dist{v: make([]float64, len(idx)), cum: make([]float64, len(idx))}
	run := 0.0
	for k, i := range idx {
		run += w[i]
		d.v[k], d.cum[k] = v[i], run/total
		d.mean += v[i] * w[i] / total
	}
	d.cum[len(d.cum)-1] = 1
	return d, true
}

// inv is the distribution's quantile at u in (0, 1]: the smallest value
// whose cumulative share reaches u.
func (d dist) inv(u float64) float64 {
	i := sort.SearchFloat64s(d.cum, u)
	if i >= len(d.v) {
		i = len(d.v) - 1
	}
	return d.v[i]
}

// wakeDist pools the wake-up delays of disturbances: each one's whole
// distribution where it was kept, else one made from its nine quantiles,
// each quantile interval's share of wake-ups put at its upper end.
func wakeDist(ds []*result.Disturbance) (dist, bool) {
	var v, w []float64
	for _, d := range ds {
		if d == nil || d.WakeupDelay == nil {
			continue
		}
		wd := d.WakeupDelay
		if us, counts := wd.Draws(); len(us) > 0 {
			for i := range us {
				v, w = append(v, us[i]), append(w, float64(counts[i]))
			}
			continue
		}
		if len(wd.Quantiles) != len(result.WakeupQuantiles) || wd.N == 0 {
			continue
		}
		prev := 0.0
		for i, q := range result.WakeupQuantiles {
			v, w = append(v, wd.Quantiles[i]), append(w, float64(wd.N)*(q-prev))
			prev = q
		}
		v, w = append(v, wd.Quantiles[len(wd.Quantiles)-1]), append(w, float64(wd.N)*(1-prev))
	}
	return newDist(v, w)
}

// latencyDist pools latency histograms (result.DecodeHistogram).
func latencyDist(hists []string) (dist, bool) {
	var v, w []float64
	for _, h := range hists {
		if h == "" {
			return dist{}, false
		}
		us, counts, err := result.DecodeHistogram(h)
		if err != nil {
			return dist{}, false
		}
		for i := range us {
			v, w = append(v, us[i]), append(w, float64(counts[i]))
		}
	}
	return newDist(v, w)
}

// delayShift is the counterfactual: how much the q-quantile (q ≤ 0: the
// mean) of lat plus m wake-up delays moves when the delays are drawn from
// now instead of then. Without lat, the delays alone. Seeded: the same
// inputs give the same answer.
func delayShift(lat *dist, now, then dist, m int, q float64, seed uint64) float64 {
	if q <= 0 {
		return float64(m) * (now.mean - then.mean)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	a := make([]float64, simSamples)
	b := make([]float64, simSamples)
	for i := range a {
		l := 0.0
		if lat != nil {
			l = lat.inv(1 - rng.Float64())
		}
		x, y := l, l
		for range m {
			u := 1 - rng.Float64()
			x += now.inv(u)
			y += then.inv(u)
		}
		a[i], b[i] = x, y
	}
	sort.Float64s(a)
	sort.Float64s(b)
	k := min(int(math.Ceil(q*simSamples))-1, simSamples-1)
	k = max(k, 0)
	return a[k] - b[k]
}

func seedOf(point, metric string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(point + "\x00" + metric))
	return h.Sum64()
}

// busiestRun is the history run of point whose trials' wake-up delays
// were longest on average (each run by its trials' median mean delay):
// the baseline's worst conditions, against which a rise is measured.
func busiestRun(tb *baseline.Testbed, point string) *baseline.Point {
	var best *baseline.Point
	bestMean := -1.0
	for _, r := range tb.Runs {
		p := r.Points[point]
		if p == nil {
			continue
		}
		c := p.Contention()
		if !c.HaveWake {
			continue
		}
		if c.Wake.Mean > bestMean {
			best, bestMean = p, c.Wake.Mean
		}
	}
	return best
}

// serverSide is what the server's own counters say of the machine: its
// threads' run-queue delay per inference and the part of it that followed
// preemptions, its CPU time per inference and the probe's kernel time
// (the CPU's speed), as medians over trials.
type serverSide struct {
	runq, preempt, cpu, kernel              float64
	haveRunq, havePreempt, haveCPU, haveKer bool
}

func serverNow(p *result.Point) serverSide {
	var s serverSide
	s.runq, s.haveRunq = trialMedian(p, func(t *result.Trial) (float64, bool) { return t.Metrics.Value(plan.MetricServerRunQ) })
	s.preempt, s.havePreempt = trialMedian(p, func(t *result.Trial) (float64, bool) { return t.Metrics.Value(plan.MetricServerPreempt) })
	s.cpu, s.haveCPU = trialMedian(p, func(t *result.Trial) (float64, bool) { return t.Metrics.Value(plan.MetricServerCPU) })
	s.kernel, s.haveKer = trialMedian(p, func(t *result.Trial) (float64, bool) {
		if t.Disturbance == nil || t.Disturbance.GEMVUs == nil {
			return 0, false
		}
		return *t.Disturbance.GEMVUs, true
	})
	return s
}

func serverThen(p *baseline.Point) serverSide {
	var s serverSide
	med := func(get func(t *baseline.Trial) (float64, bool)) (float64, bool) {
		var vs []float64
		for i := range p.Trials {
			if v, ok := get(&p.Trials[i]); ok {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			return 0, false
		}
		return stats.Median(vs), true
	}
	value := func(m string) func(t *baseline.Trial) (float64, bool) {
		return func(t *baseline.Trial) (float64, bool) { v, ok := t.Values[m]; return v, ok }
	}
	s.runq, s.haveRunq = med(value(plan.MetricServerRunQ))
	s.preempt, s.havePreempt = med(value(plan.MetricServerPreempt))
	s.cpu, s.haveCPU = med(value(plan.MetricServerCPU))
	s.kernel, s.haveKer = med(func(t *baseline.Trial) (float64, bool) {
		if t.Disturbance == nil || t.Disturbance.GEMVUs == nil {
			return 0, false
		}
		return *t.Disturbance.GEMVUs, true
	})
	return s
}

func trialMedian(p *result.Point, get func(t *result.Trial) (float64, bool)) (float64, bool) {
	var vs []float64
	for i := range p.Trials {
		if v, ok := get(&p.Trials[i]); ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	return stats.Median(vs), true
}

// inferencesPerExecution is how many inferences one execution of the
// point's model served (the server's statistics; else the batch size): a
// request waits for its whole execution, so an execution's stretch is
// each of its requests'.
func inferencesPerExecution(p *result.Point) float64 {
	v, ok := trialMedian(p, func(t *result.Trial) (float64, bool) {
		s := t.Metrics.Server
		if s == nil || s.Reset || s.ExecutionCount <= 0 || s.InferenceCount <= 0 {
			return 0, false
		}
		return float64(s.InferenceCount) / float64(s.ExecutionCount), true
	})
	if !ok {
		return float64(max(p.BatchSize, 1))
	}
	return v
}

// stretch is the server's measured slow-down per execution, µs: the rise
// of its run-queue delay and, on a CPU that ran slower (the probe's
// kernel took longer), the baseline's CPU time scaled by it. Zero where
// either side did not measure it.
//
// Where both sides measured the server's CPU time, the stretch is a
// counterfactual instead: the baseline's CPU time per inference, on
// today's CPU speed, waiting as long per µs of CPU as the server's threads
// waited now, less the baseline's own. A build that computes twice as
// long is also runnable twice as long and waits twice as long at the same
// contention; the raw rise of the wait per inference made its own
// slowness part of its excuse, so that against a history recorded on a
// busy machine (run-queue wait ten times the CPU time) a 2× slower build's
// compute time was excused whole (TestServerStretchIsTheBaselines).
//
// Where both sides split the wait, only the part that followed
// preemptions counts (preempted is then true): a wake-up's wait is the
// probe's to estimate, and a server's wake-ups are often off the
// request's path. A Go server's idle threads, woken to look for work,
// each waited for a CPU before finding none: at load ~10 the delay
// model's threads waited 44 ms per 20 ms request, all threads summed,
// and excused a 2× slower build (TestServerStretchCountsPreemptions).
func stretch(now, then serverSide, perExec float64) (us float64, runqRise, speed float64, preempted bool) {
	speed = 1
	if now.haveKer && then.haveKer && then.kernel > 0 {
		speed = max(now.kernel/then.kernel, 1)
	}
	if now.havePreempt && then.havePreempt {
		now.runq, then.runq, preempted = now.preempt, then.preempt, true
	}
	if now.haveRunq && then.haveRunq && now.haveCPU && then.haveCPU && now.cpu > 0 && then.cpu > 0 {
		cNow, cThen := now.runq/now.cpu, then.runq/then.cpu
		runqRise = max(then.cpu*speed*cNow-then.runq, 0)
		return perExec * max(then.cpu*(speed*(1+cNow)-(1+cThen)), 0), runqRise, speed, preempted
	}
	if now.haveRunq && then.haveRunq {
		runqRise = max(now.runq-then.runq, 0)
	}
	cpu := 0.0
	if then.haveCPU {
		cpu = then.cpu * (speed - 1)
	}
	return perExec * (runqRise + cpu), runqRise, speed, preempted
}

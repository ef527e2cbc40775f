package verdict

// The soundness harness runs the real gate code over seeded synthetic
// runs and measures its error rates against the goals in
// docs/regression.md: A/A false alarms at most 1% per check and 5% per
// run, power at least 80% for a 5% change in same-run mode (10 trials per
// arm) and at least 90% for a 10% change in baseline mode (10 history
// runs, job SD 2%). Rates are asserted with a margin of three standard
// errors of the simulated proportion, as the design note prescribes.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

const trialCV = 0.02 // realistic per-trial noise of a warmed-up server

// noiseModel yields the multiplicative factor of trial i of n (a value
// above 1 means faster: more throughput, less latency).
type noiseModel struct {
	name  string
	trial func(rng *rand.Rand, i, n int) float64
	// premise says the model's noise is within the goals' premise (trial
	// CV about 2%); power goals are asserted only there. Contamination
	// (bimodal) adds about 4.5% of trial CV, so its power is measured and
	// logged while its false-alarm rates are asserted like the others'.
	premise bool
	// rounds gives the trials the start times of interleaved rounds, so
	// that a comparison pairs its arms by round as it does a real run's
	// (signed-rank test); without, it tests them as independent samples.
	rounds bool
}

var noiseModels = []noiseModel{
	{name: "normal", premise: true, trial: func(rng *rand.Rand, _, _ int) float64 { return 1 + trialCV*rng.NormFloat64() }},
	{name: "lognormal", premise: true, trial: func(rng *rand.Rand, _, _ int) float64 { return math.Exp(trialCV * rng.NormFloat64()) }},
	{name: "bimodal", trial: func(rng *rand.Rand, _, _ int) float64 { return tenant(rng) * (1 + trialCV*rng.NormFloat64()) }},
	{name: "drift", premise: true, trial: func(rng *rand.Rand, i, n int) float64 {
		return (1 + 0.03*(float64(i)/float64(n-1)-0.5)) * (1 + trialCV*rng.NormFloat64())
	}},
}

// tenant is another tenant on the GPU: 10% of the time, 15% slower.
func tenant(rng *rand.Rand) float64 {
	if rng.Float64() < 0.1 {
		return 0.85
	}
	return 1
}

// replicates is 200 per noise model in plain test runs, which checks the
// goals with a wider margin in seconds; PERFSCEN_SOUNDNESS=full (make
// soundness-sim, run by CI) runs the goals' sample size, 2000, which takes
// minutes.
func replicates() int {
	if os.Getenv("PERFSCEN_SOUNDNESS") == "full" {
		return 2000
	}
	return 200
}

// skipUnderRace leaves the simulation to the run without the race
// detector (make test has a line of its own for it): it is arithmetic on
// one goroutine per noise model, which the detector slows tenfold (236 s
// against 24 s for the 200 replicates) without anything to find, and the
// code it drives runs under the detector in the other tests here.
func skipUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the simulation runs without it (make test runs it so)")
	}
}

// simPoint measures one point: throughput and three latency percentiles
// with independent trial noise, all scaled by the job factor and speed.
const simTrials = 10

func simPoint(rng *rand.Rand, nm noiseModel, id, model string, coords map[string]string, job, speed float64) result.Point {
	p := result.Point{ID: id, Model: model, Coords: coords, Status: result.PointStable}
	growPoint(rng, nm, &p, job, speed, simTrials)
	p.Summary = p.Trials[simTrials/2].Metrics
	return p
}

// growPoint adds k trials to p from the same job, as the runner's
// extension does while the server is still up.
func growPoint(rng *rand.Rand, nm noiseModel, p *result.Point, job, speed float64, k int) {
	for j := 0; j < k; j++ {
		i := len(p.Trials)
		f := func() float64 { return job * speed * nm.trial(rng, i, simTrials) }
		m := result.Metrics{Requests: 1000, Throughput: 1000 * f(), P50Us: 8000 / f(), P95Us: 12000 / f(), P99Us: 15000 / f()}
		tr := result.Trial{Index: i, Duration: time.Second, Metrics: m}
		if nm.rounds {
			// Both arms' trial i in round i, as the runner interleaves them.
			tr.Start = epoch.Add(time.Duration(i) * time.Second)
		}
		p.Trials = append(p.Trials, tr)
	}
}

// simLooks is the default sequential budget: two more rounds of
// simTrials (gate.max_extra_trials 20), so three looks.
const simLooks = 3

// sequentially decides the checks of eval as perfscen run does: after each
// look the points of inconclusive checks get simTrials more trials (grow)
// and the checks are decided again at the next look's share of α;
// decisions already made stand.
func sequentially(eval func(Options) []Check, grow func(ids []string)) []Check {
	var v *Verdict
	for look := 1; look <= simLooks; look++ {
		v = Settle(v, &Verdict{Checks: eval(Options{Look: look, MaxLooks: simLooks})})
		ids := v.Undecided()
		if len(ids) == 0 || look == simLooks {
			break
		}
		grow(ids)
	}
	return v.Checks
}

// growAll grows the named points of run.
func growAll(rng *rand.Rand, nm noiseModel, run *result.Run, ids []string, job func(id string) float64, speed func(id string) float64) {
	for _, id := range ids {
		for i := range run.Points {
			if run.Points[i].ID == id {
				growPoint(rng, nm, &run.Points[i], job(id), speed(id), simTrials)
			}
		}
	}
}

// rate counts alarms. runs is the number of simulated runs behind the
// count: checks of one run share its job effect, so the margin of error
// is computed from runs, not from checks.
type rate struct{ hits, n, runs int }

func (r *rate) add(hit bool) {
	r.n++
	if hit {
		r.hits++
	}
}

func (r rate) p() float64 { return float64(r.hits) / float64(r.n) }

// wilson is the 95% Wilson score interval.
func (r rate) wilson() (lo, hi float64) {
	const z = 1.959964
	n, p := float64(r.n), r.p()
	d := 1 + z*z/n
	c := (p + z*z/(2*n)) / d
	h := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / d
	return c - h, c + h
}

func (r rate) String() string {
	lo, hi := r.wilson()
	return fmt.Sprintf("%.2f%% (%d/%d, 95%% CI %.2f–%.2f%%)", 100*r.p(), r.hits, r.n, 100*lo, 100*hi)
}

// atMost and atLeast allow three standard errors of the target.
func atMost(t *testing.T, what string, r rate, target float64) {
	t.Helper()
	if lim := target + 3*math.Sqrt(target*(1-target)/float64(r.runs)); r.p() > lim {
		t.Errorf("%s: %s exceeds %.1f%% (limit %.2f%%)", what, r, 100*target, 100*lim)
	}
}

func atLeast(t *testing.T, what string, r rate, target float64) {
	t.Helper()
	if lim := target - 3*math.Sqrt(target*(1-target)/float64(r.runs)); r.p() < lim {
		t.Errorf("%s: %s below %.0f%% (limit %.2f%%)", what, r, 100*target, 100*lim)
	}
}

// Same-run mode: each replicate is one run with three sweep points where
// candidate and reference are identical and the requirement is ratio ≥ 1
// (a pass there is a false alarm: the gate claimed what is not true), plus
// one point where the candidate's p95 is truly 5% lower and the
// requirement is ratio ≤ 1 (a pass there is a detection).
func TestSoundnessSameRun(t *testing.T) {
	skipUnderRace(t)
	for mi, nm := range sameRunModels() {
		t.Run(nm.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(100+mi), 1))
			null := []plan.Comparison{{Name: "aa", Candidate: "cand", Reference: "ref", Metric: "throughput", MinRatio: 1,
				Selector: plan.Selector{At: map[string][]string{"concurrency": {"1", "2", "4"}}}}}
			better := []plan.Comparison{{Name: "better", Candidate: "cand", Reference: "ref", Metric: "throughput", MinRatio: 1,
				Selector: plan.Selector{At: map[string][]string{"concurrency": {"16"}}}}}
			power := []plan.Comparison{{Name: "ab", Candidate: "cand", Reference: "ref", Metric: "p95", MaxRatio: 1,
				Selector: plan.Selector{At: map[string][]string{"concurrency": {"8"}}}}}
			var perCheck, perCheckFail, perRun, falseFail, detect, undecided rate
			for rep := 0; rep < replicates(); rep++ {
				job := 1 + 0.02*rng.NormFloat64() // shared by both arms of one run
				one := func(string) float64 { return job }
				run := mkRun()
				for _, cc := range []int{1, 2, 4} {
					run.Points = append(run.Points,
						simPoint(rng, nm, fmt.Sprintf("cand/c=%d", cc), "cand", c(cc), job, 1),
						simPoint(rng, nm, fmt.Sprintf("ref/c=%d", cc), "ref", c(cc), job, 1))
				}
				any := false
				for _, ch := range sequentially(func(o Options) []Check { return o.Comparisons(null, run) },
					func(ids []string) { growAll(rng, nm, run, ids, one, one) }) {
					// On the bound either decision is wrong: a pass claims
					// what is not shown, a fail a shortfall that is not there.
					perCheck.add(ch.Status == StatusPass)
					perCheckFail.add(ch.Status == StatusFail)
					any = any || ch.Status == StatusPass
				}
				perRun.add(any)

				// Candidate 5% faster than a ratio ≥ 1 requirement: a
				// fail would be a false alarm (exit 1).
				run.Points = []result.Point{
					simPoint(rng, nm, "cand/c=16", "cand", c(16), job, 1.05),
					simPoint(rng, nm, "ref/c=16", "ref", c(16), job, 1),
				}
				speed := func(id string) float64 {
					if id == "cand/c=16" {
						return 1.05
					}
					return 1
				}
				ch := sequentially(func(o Options) []Check { return o.Comparisons(better, run) },
					func(ids []string) { growAll(rng, nm, run, ids, one, speed) })[0]
				falseFail.add(ch.Status == StatusFail)

				run.Points = []result.Point{
					simPoint(rng, nm, "cand/c=8", "cand", c(8), job, 1/0.95),
					simPoint(rng, nm, "ref/c=8", "ref", c(8), job, 1),
				}
				speed = func(id string) float64 {
					if id == "cand/c=8" {
						return 1 / 0.95
					}
					return 1
				}
				ch = sequentially(func(o Options) []Check { return o.Comparisons(power, run) },
					func(ids []string) { growAll(rng, nm, run, ids, one, speed) })[0]
				detect.add(ch.Status == StatusPass)
				undecided.add(ch.Status == StatusInconclusive)
			}
			perCheck.runs, perCheckFail.runs, perRun.runs, falseFail.runs, detect.runs, undecided.runs = replicates(), replicates(), replicates(), replicates(), replicates(), replicates()
			t.Logf("same-run %-18s (3 looks) false pass per check %s; false fail on the bound %s; per run (3 checks) %s; fail when 5%% better %s; power at 5%% %s; still inconclusive at 5%% %s",
				nm.name, perCheck, perCheckFail, perRun, falseFail, detect, undecided)
			atMost(t, "false passes per check", perCheck, 0.01)
			atMost(t, "false fails per check", perCheckFail, 0.01)
			atMost(t, "false alarms per run", perRun, 0.05)
			atMost(t, "fails of a better candidate", falseFail, 0.01)
			if nm.premise {
				atLeast(t, "power for a 5% change", detect, 0.80)
			}
		})
	}
}

// sameRunModels is every noise model twice: its trials paired by round
// (what a run's interleaved arms are) and as independent samples (arms
// that do not pair: an imported result, unequal trial counts).
func sameRunModels() []noiseModel {
	var out []noiseModel
	for _, nm := range noiseModels {
		paired := nm
		paired.name, paired.rounds = nm.name+"/paired", true
		nm.name += "/unpaired"
		out = append(out, paired, nm)
	}
	return out
}

// Baseline mode: a history of 10 runs, each with its own job effect (SD
// 2%), then a new run from the same distribution (A/A) and one 10%
// slower. Four metrics are gated per run.
func TestSoundnessBaseline(t *testing.T) {
	skipUnderRace(t)
	const k, jobSD = 10, 0.02
	spec := &plan.Baseline{Metrics: []string{"throughput", "p50", "p95", "p99"}}
	for mi, nm := range noiseModels {
		t.Run(nm.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(200+mi), 2))
			job := func() float64 { return math.Exp(jobSD * rng.NormFloat64()) }
			var perMetric, perRun, detect, detect5, undecided10, looked rate
			var mde float64
			for rep := 0; rep < replicates(); rep++ {
				tb := &baseline.Testbed{ID: "tb1"}
				for i := 0; i < k; i++ {
					tb.Runs = append(tb.Runs, baseline.Summarize(mkRun(simPoint(rng, nm, "m/c=1", "m", c(1), job(), 1))))
				}
				base := &baseline.File{FormatVersion: baseline.FormatVersion, Scenario: "demo", Testbeds: map[string]*baseline.Testbed{"tb1": tb}}
				// gate runs one new run sequentially: its job effect stays
				// fixed while extra trials are added.
				gate := func(speed float64) []Check {
					j := job()
					run := mkRun(simPoint(rng, nm, "m/c=1", "m", c(1), j, speed))
					looks := 0
					out := sequentially(func(o Options) []Check { looks++; return o.Baseline(spec, base, run) },
						func(ids []string) {
							growAll(rng, nm, run, ids, func(string) float64 { return j }, func(string) float64 { return speed })
						})
					looked.add(looks > 1)
					return out
				}
				any := false
				for _, ch := range gate(1) {
					perMetric.add(ch.Class == ClassRegressed)
					any = any || ch.Class == ClassRegressed
				}
				perRun.add(any)
				for _, ch := range gate(0.9) {
					detect.add(ch.Class == ClassRegressed)
					undecided10.add(ch.Status == StatusInconclusive)
					mde += ch.MDE
				}
				for _, ch := range gate(0.95) {
					detect5.add(ch.Class == ClassRegressed)
				}
			}
			perMetric.runs, perRun.runs, detect.runs, detect5.runs, undecided10.runs = replicates(), replicates(), replicates(), replicates(), replicates()
			t.Logf("baseline %-9s (3 looks) false alarm per metric %s; per run (4 metrics) %s; power at 10%% %s (inconclusive %s); at 5%% %s; mean MDE %.1f%%; runs that took extra trials %s",
				nm.name, perMetric, perRun, detect, undecided10, detect5, 100*mde/float64(detect.n), looked)
			atMost(t, "false alarms per metric", perMetric, 0.01)
			atMost(t, "false alarms per run", perRun, 0.05)
			if nm.premise {
				atLeast(t, "power for a 10% change", detect, 0.90)
			}
		})
	}
}

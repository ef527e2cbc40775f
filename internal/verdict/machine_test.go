package verdict

import (
	"encoding/base64"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// machine is a wake-up delay model: every wake-up waits base µs (give
// or take half), and a share of them, hit by a neighbour, about long µs
// more.
type machine struct {
	share, long, base float64
}

func (m machine) draw(rng *rand.Rand) float64 {
	d := m.base * (0.5 + rng.Float64())
	if rng.Float64() < m.share {
		d += m.long * (0.8 + 0.4*rng.Float64())
	}
	return d
}

// machinePoint simulates a closed loop at concurrency 1, as the review did:
// trials of n requests, each taking a service time drawn by service plus
// WakeupsPerRequest wake-up delays; the probe samples the same delays.
// The trials carry what perfscen records: the figures, the latency
// histogram and the probe's delay distribution.
func machinePoint(t *testing.T, rng *rand.Rand, trials, n int, service func(*rand.Rand) float64, m machine) result.Point {
	t.Helper()
	p := result.Point{ID: "a/c=1", Model: "a", ModelName: "a", Coords: c(1), Status: result.PointStable, BatchSize: 1, Concurrency: 1}
	for i := 0; i < trials; i++ {
		h := hdrhistogram.New(1, 60_000_000, 3)
		lat := make([]float64, n)
		sum := 0.0
		for j := range lat {
			l := service(rng)
			for range WakeupsPerRequest {
				l += m.draw(rng)
			}
			lat[j] = l
			sum += l
			if err := h.RecordValue(int64(math.Round(l))); err != nil {
				t.Fatal(err)
			}
		}
		sort.Float64s(lat)
		q := func(x float64) float64 { return lat[int(math.Ceil(x*float64(n)))-1] }
		avg := sum / float64(n)
		met := result.Metrics{Throughput: 1e6 / avg, Requests: int64(n), LatencyAvgUs: avg,
			P50Us: q(0.5), P90Us: q(0.9), P95Us: q(0.95), P99Us: q(0.99), LatencyMaxUs: lat[n-1]}
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		// The probe: 500 wake-ups a window, bucketed as it does.
		counts := map[int]uint64{}
		var dsum float64
		for range 500 {
			d := m.draw(rng)
			dsum += d
			counts[wakeBucket(d)]++
		}
		w := &result.WakeupDelay{Mean: dsum / 500, N: 500}
		for b := 0; b < 200; b++ {
			if counts[b] > 0 {
				w.Buckets = append(w.Buckets, [2]uint64{uint64(b), counts[b]})
			}
		}
		for _, q := range result.WakeupQuantiles {
			w.Quantiles = append(w.Quantiles, w.At(q))
		}
		_ = base64.StdEncoding // the encoding is HDR's own base64
		p.Trials = append(p.Trials, result.Trial{Index: i, Duration: time.Second, Metrics: met, Histogram: string(enc),
			Disturbance: &result.Disturbance{OtherCPU: 0.5, Load1: 5, WakeupDelay: w}})
	}
	p.Summary = p.FigureMetrics()
	p.Summary.Requests = int64(trials * n)
	return p
}

func wakeBucket(us float64) int {
	for i := 0; ; i++ {
		if lo, hi := result.WakeupBucketBounds(i); us >= lo && us < hi {
			return i
		}
	}
}

func normalService(mean, sd float64) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return max(mean+sd*r.NormFloat64(), 100) }
}

// simHistory records k runs of the unchanged service on a quiet machine.
func simHistory(t *testing.T, rng *rand.Rand, k int, service func(*rand.Rand) float64, m machine) *baseline.File {
	t.Helper()
	f := baseline.New("demo")
	for i := 0; i < k; i++ {
		run := mkRun(machinePoint(t, rng, 10, 1000, service, m))
		if _, err := baseline.Update(f, run, baseline.UpdateOptions{Now: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// The review's two cases, with the rule's own model: 1000 requests a
// trial, latency = service time + 4 wake-up delays drawn from what the
// probe samples. The union-bound rule failed the first (an unchanged
// build beside a neighbour: "could account for +20µs at most") and
// excused the second (a 2× slower build beside a busier neighbour:
// "inconclusive: testbed disturbed", which the CI template turned green).
func TestMachineEstimateReviewCases(t *testing.T) {
	quiet := machine{share: 0, base: 10}
	spec := &plan.Baseline{Path: "b.json"}
	rng := rand.New(rand.NewPCG(41, 42))
	hist := simHistory(t, rng, 8, normalService(10_000, 1_500), quiet)

	t.Run("unchanged build, neighbour delays 7% of wake-ups by 3 ms", func(t *testing.T) {
		run := mkRun(machinePoint(t, rng, 10, 1000, normalService(10_000, 1_500), machine{share: 0.07, long: 3000, base: 10}))
		got := Options{}.Baseline(spec, hist, run)
		v := &Verdict{Checks: got}
		if v.Outcome() == OutcomeFail {
			t.Fatalf("an unchanged build fails beside a neighbour:\n%s", describe(got))
		}
		p50 := find(got, "p50")
		if p50 == nil || p50.Effect < 0.03 {
			t.Fatalf("the neighbour should raise p50 by several percent: %s", describe(got))
		}
		if p50.Status == StatusInconclusive && !strings.Contains(p50.Message, "testbed disturbed (estimated from wake-up delays") {
			t.Errorf("p50: %s", p50.Message)
		}
	})
	t.Run("2x slower build, neighbour delays 12% of wake-ups by 4 ms", func(t *testing.T) {
		run := mkRun(machinePoint(t, rng, 10, 1000, normalService(20_000, 3_000), machine{share: 0.12, long: 4000, base: 10}))
		got := Options{}.Baseline(spec, hist, run)
		if o := (&Verdict{Checks: got}).Outcome(); o != OutcomeFail {
			t.Fatalf("a 2× slower build is %s:\n%s", o, describe(got))
		}
		for _, m := range []string{"throughput", "p50"} {
			ch := find(got, m)
			if ch == nil || ch.Status != StatusFail || !strings.Contains(strings.Join(ch.Warnings, " "), "by estimate; this change is larger") {
				t.Errorf("%s: %s", m, describe([]Check{*ch}))
			}
		}
	})
	t.Run("a 10% slower build beside the first neighbour", func(t *testing.T) {
		run := mkRun(machinePoint(t, rng, 10, 1000, normalService(11_000, 1_650), machine{share: 0.07, long: 3000, base: 10}))
		got := Options{}.Baseline(spec, hist, run)
		if o := (&Verdict{Checks: got}).Outcome(); o != OutcomeFail {
			t.Fatalf("a 10%% slower build is %s:\n%s", o, describe(got))
		}
	})
}

func find(cs []Check, metric string) *Check {
	for i := range cs {
		if cs[i].Metric == metric && cs[i].Kind == KindBaseline {
			return &cs[i]
		}
	}
	return nil
}

func describe(cs []Check) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(string(c.Status) + " " + c.Metric + ": " + c.Message + " " + strings.Join(c.Warnings, " | ") + "\n")
	}
	return b.String()
}

// The counterfactual adds delays to a distribution, quantile by quantile
// of the sum, not of the parts: a service time spread over ±1.5 ms moves
// its median by about 0.6 ms when a quarter of requests meet one 3 ms
// delay, while the delays' own median does not move at all.
func TestDelayShiftAddsDistributions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var sv, sw []float64
	for range 20000 {
		sv, sw = append(sv, normalService(10_000, 1_500)(rng)), append(sw, 1)
	}
	lat, _ := newDist(sv, sw)
	now, _ := newDist([]float64{10, 3010}, []float64{0.93, 0.07})
	then, _ := newDist([]float64{10}, []float64{1})
	med := delayShift(&lat, now, then, 4, 0.5, 7)
	if med < 450 || med > 750 {
		t.Errorf("median shift %.0f µs, want about 590", med)
	}
	alone := delayShift(nil, now, then, 4, 0.5, 7)
	if alone > 50 {
		t.Errorf("delays alone move the median by %.0f µs, want about 0", alone)
	}
	if mean := delayShift(&lat, now, then, 4, 0, 7); math.Abs(mean-4*0.07*3000) > 1 {
		t.Errorf("mean shift %.1f, want %.1f", mean, 4*0.07*3000)
	}
	if again := delayShift(&lat, now, then, 4, 0.5, 7); again != med {
		t.Errorf("not deterministic: %g then %g", med, again)
	}
}

// withServer gives p's trials the server's counters: CPU time and
// run-queue delay per inference (±1% from trial to trial), the probe's
// kernel time, and the server's compute time per batch of 8.
func withServer(p result.Point, cpu, runq, kernel, compute float64) result.Point {
	p.Trials = append([]result.Trial(nil), p.Trials...)
	for i := range p.Trials {
		f := 1 + 0.01*float64(i%3-1)
		r, w, k := runq*f, cpu*f/kernel, kernel
		m := p.Trials[i].Metrics
		m.Process = &result.ProcessStats{CPUUs: cpu * f, RunQueueUs: &r, Work: &w, Inferences: 800}
		m.Server = &result.ServerStats{RequestCount: 100, InferenceCount: 800, ExecutionCount: 100, ComputeInferUs: compute * f}
		p.Trials[i].Metrics = m
		d := *p.Trials[i].Disturbance
		d.GEMVUs = &k
		p.Trials[i].Disturbance = &d
	}
	p.BatchSize = 8
	p.Summary.Process, p.Summary.Server = p.Trials[0].Metrics.Process, p.Trials[0].Metrics.Server
	p.Summary = p.FigureMetrics()
	return p
}

// The server's own counters: a CPU-bound model time-sliced by a busy
// machine waits in the run queue while it computes, which no wake-up
// shows; its compute time's rise is excused by that measured wait, its
// CPU time's by the CPU's measured speed, and its work per inference by
// nothing.
func TestServerStretchExcusesComputeTime(t *testing.T) {
	quiet := machine{base: 10}
	rng := rand.New(rand.NewPCG(5, 6))
	f := baseline.New("demo")
	for i := 0; i < 8; i++ {
		j := 1 + 0.01*rng.NormFloat64()
		pt := withServer(machinePoint(t, rng, 10, 200, normalService(2500, 100), quiet), 300*j, 20, 20, 8*(300+20)*j)
		if _, err := baseline.Update(f, mkRun(pt), baseline.UpdateOptions{Now: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{plan.MetricServerInfer, plan.MetricServerCPU, plan.MetricServerWork}}
	busy := machine{share: 0.2, long: 2000, base: 50}
	for _, tt := range []struct {
		name       string
		cpu, runq  float64 // per inference
		kernel     float64
		want       map[string]Status
		wantResult Outcome
	}{
		// Unchanged, time-sliced: compute 2.56 ms → 4.96 ms per request,
		// all of it run-queue wait; the CPU 10% slower.
		{"unchanged on a busy machine", 330, 300, 22, map[string]Status{
			plan.MetricServerInfer: StatusInconclusive, plan.MetricServerCPU: StatusInconclusive, plan.MetricServerWork: StatusPass}, OutcomeInconclusive},
		{"10% more work on a busy machine", 363, 300, 22, map[string]Status{
			plan.MetricServerWork: StatusFail}, OutcomeFail},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pt := withServer(machinePoint(t, rng, 10, 200, normalService(2500, 100), busy), tt.cpu, tt.runq, tt.kernel, 8*(tt.cpu+tt.runq))
			got := Options{}.Baseline(spec, f, mkRun(pt))
			if o := (&Verdict{Checks: got}).Outcome(); o != tt.wantResult {
				t.Errorf("outcome %s, want %s:\n%s", o, tt.wantResult, describe(got))
			}
			for m, want := range tt.want {
				if ch := find(got, m); ch == nil || ch.Status != want {
					t.Errorf("%s: want %s:\n%s", m, want, describe(got))
				}
			}
		})
	}
}

// A history recorded on a busy machine (the server's threads waited ten
// µs for a CPU per µs they ran, the runs 5% apart) against a build twice
// as slow measured on the same machine: the wait per inference doubled
// with the compute, and the raw rise of the wait excused all of it but
// the CPU time, a tenth of the compute time, within the history's spread:
// "inconclusive: testbed disturbed" for a 2× slowdown. The stretch is the
// baseline's: at the same contention and CPU speed it is zero, so the
// slower build fails, and the unchanged one, measured the same way,
// passes.
func TestServerStretchIsTheBaselines(t *testing.T) {
	busy := machine{share: 0.2, long: 2000, base: 50}
	rng := rand.New(rand.NewPCG(7, 8))
	f := baseline.New("demo")
	for i := 0; i < 8; i++ {
		j := 1 + 0.05*rng.NormFloat64() // a busy machine's history: 5% from run to run
		pt := withServer(machinePoint(t, rng, 10, 200, normalService(2500, 100), busy), 300*j, 3000*j, 20, 8*3300*j)
		if _, err := baseline.Update(f, mkRun(pt), baseline.UpdateOptions{Now: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{plan.MetricServerInfer}}
	for _, tt := range []struct {
		name      string
		cpu, runq float64
		want      []Status
	}{
		{"2× slower, same contention", 600, 6000, []Status{StatusFail}},
		// The history's 5% spread hides changes under about 40%: the
		// unchanged build's check passes on nothing (not gated).
		{"unchanged, same contention", 300, 3000, []Status{StatusPass, StatusNotGated}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pt := withServer(machinePoint(t, rng, 10, 200, normalService(2500, 100), busy), tt.cpu, tt.runq, 20, 8*(tt.cpu+tt.runq))
			got := Options{}.Baseline(spec, f, mkRun(pt))
			if ch := find(got, plan.MetricServerInfer); ch == nil || !slices.Contains(tt.want, ch.Status) {
				t.Errorf("server_compute_infer: want %s:\n%s", tt.want, describe(got))
			}
		})
	}
}

// withPreempt gives every trial of p (a withServer point) one inference
// per execution and the part of its run-queue delay that followed
// preemptions, per inference (none where preempt < 0).
func withPreempt(p result.Point, preempt float64) result.Point {
	p.Trials = append([]result.Trial(nil), p.Trials...)
	for i := range p.Trials {
		m := p.Trials[i].Metrics
		ps, ss := *m.Process, *m.Server
		ss.ExecutionCount = ss.InferenceCount
		if preempt >= 0 {
			v := preempt * (1 + 0.01*float64(i%3-1))
			ps.PreemptUs = &v
		}
		m.Process, m.Server = &ps, &ss
		p.Trials[i].Metrics = m
	}
	p.BatchSize = 1
	p.Summary.Process, p.Summary.Server = p.Trials[0].Metrics.Process, p.Trials[0].Metrics.Server
	p.Summary = p.FigureMetrics()
	return p
}

// A sleep-bound model served by a Go server on a machine whose other jobs
// keep every CPU busy (the campaign's delay model at load ~10, beside two
// `make gate` runs): the server's threads, all summed, waited 21 ms per
// 20 ms request, 26 µs per µs of CPU, against 6 in the history. Most of
// that wait followed wake-ups of threads with nothing to do for the
// request (idle runtime threads woken to look for work); a fifth followed
// preemptions. Counted whole, the wait excused a 2× slower build as
// "testbed disturbed"; counting the preemptions' part, it fails, and the
// unchanged build on the same machine does not. A server whose wait
// follows preemptions (a CPU-bound model time-sliced) keeps its excuse.
func TestServerStretchCountsPreemptions(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	quiet := machine{base: 10}
	f := baseline.New("demo")
	for i := 0; i < 8; i++ {
		j := 1 + 0.01*rng.NormFloat64()
		pt := withServer(machinePoint(t, rng, 10, 200, normalService(10_300, 150), quiet), 800*j, 4800*j, 20, 10_500*j)
		pt = withPreempt(pt, 1100*j)
		if _, err := baseline.Update(f, mkRun(pt), baseline.UpdateOptions{Now: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{plan.MetricP50}}
	for _, tt := range []struct {
		name          string
		service       float64
		cpu, runq     float64
		preempt       float64 // < 0: the switches were not read
		want          Status
		wantInMessage string
	}{
		{"2× slower, wake-ups' wait counted whole (no switches read)", 20_300, 800, 20_800, -1, StatusInconclusive, "run-queue delay 20.80ms vs 4.80ms"},
		{"2× slower, preemptions' part", 20_300, 800, 20_800, 4600, StatusFail, ""},
		{"unchanged, preemptions' part", 10_300, 800, 20_800, 4600, StatusPass, ""},
		// Time-sliced compute: 4 ms of a 10 ms request's wait followed
		// preemptions. Excused by them, as before.
		{"unchanged, time-sliced", 14_300, 800, 20_800, 16_000, StatusInconclusive, "after preemptions 16.00ms vs 1.10ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pt := withServer(machinePoint(t, rng, 10, 200, normalService(tt.service, 150), quiet), tt.cpu, tt.runq, 20, tt.service)
			pt = withPreempt(pt, tt.preempt)
			ch := find(Options{}.Baseline(spec, f, mkRun(pt)), plan.MetricP50)
			if ch == nil || ch.Status != tt.want || !strings.Contains(ch.Message, tt.wantInMessage) {
				t.Fatalf("p50: want %s (message with %q):\n%s", tt.want, tt.wantInMessage, describe([]Check{*ch}))
			}
		})
	}
}

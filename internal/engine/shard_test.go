package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// Concurrency and budgets split as evenly as whole requests allow, the
// agents' workers walk the input data as one pool's would (their cursor
// ranges tile [0, total)), and a constant rate is split with schedules
// shifted so that together they are the one schedule at the whole rate.
func TestShardOf(t *testing.T) {
	cases := []struct {
		name    string
		spec    SessionSpec
		agents  int
		workers []int
		bases   []int
		budgets []int64
		rates   []float64
		phases  []time.Duration
	}{
		{name: "concurrency 7 over 3", spec: SessionSpec{Concurrency: 7}, agents: 3,
			workers: []int{3, 2, 2}, bases: []int{0, 3, 5}, budgets: []int64{0, 0, 0}, rates: []float64{0, 0, 0}, phases: []time.Duration{0, 0, 0}},
		{name: "iterations 10 over 3", spec: SessionSpec{Concurrency: 3, Budget: 10, Whole: true}, agents: 3,
			workers: []int{1, 1, 1}, bases: []int{0, 1, 2}, budgets: []int64{4, 3, 3}, rates: []float64{0, 0, 0}, phases: []time.Duration{0, 0, 0}},
		{name: "constant rate 100 over 4", spec: SessionSpec{Rate: 100, Distribution: plan.Constant}, agents: 4,
			workers: []int{4, 4, 4, 4}, bases: []int{0, 4, 8, 12}, budgets: []int64{0, 0, 0, 0}, rates: []float64{25, 25, 25, 25},
			phases: []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}},
		{name: "poisson rate, max threads 5 over 2", spec: SessionSpec{Rate: 50, Distribution: plan.Poisson, MaxThreads: 5}, agents: 2,
			workers: []int{3, 2}, bases: []int{0, 3}, budgets: []int64{0, 0}, rates: []float64{25, 25}, phases: []time.Duration{0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w, b, ph []int
			var bu []int64
			var r []float64
			seeds := map[uint64]bool{}
			for i := range tc.agents {
				sh, err := ShardOf(tc.spec, i, tc.agents)
				if err != nil {
					t.Fatal(err)
				}
				w, b, bu, r, ph = append(w, sh.Workers), append(b, sh.WorkerBase), append(bu, sh.Budget), append(r, sh.Rate), append(ph, int(sh.Phase))
				seeds[sh.Seed] = true
			}
			var wantPh []int
			for _, p := range tc.phases {
				wantPh = append(wantPh, int(p))
			}
			if !slices.Equal(w, tc.workers) || !slices.Equal(b, tc.bases) || !slices.Equal(bu, tc.budgets) || !slices.Equal(r, tc.rates) || !slices.Equal(ph, wantPh) {
				t.Errorf("workers %v bases %v budgets %v rates %v phases %v", w, b, bu, r, ph)
			}
			if len(seeds) != tc.agents {
				t.Errorf("agents share Poisson seeds: %v", seeds)
			}
		})
	}
	if _, err := ShardOf(SessionSpec{Concurrency: 2}, 0, 3); err == nil {
		t.Error("3 agents shared concurrency 2")
	}
}

// The agents' shifted schedules at rate/N together send exactly when one
// schedule at the whole rate would.
func TestShardedScheduleIsTheWholeSchedule(t *testing.T) {
	const agents, rate = 3, 90.0
	whole := ConstantPacer{Rate: rate}
	var union []time.Duration
	for i := range agents {
		sh, err := ShardOf(SessionSpec{Rate: rate}, i, agents)
		if err != nil {
			t.Fatal(err)
		}
		p := phased{Pacer: ConstantPacer{Rate: sh.Rate}, phase: sh.Phase}
		for n := range uint64(30) {
			union = append(union, p.Due(n))
		}
		// Pace waits for the shifted schedule.
		if wait, _ := p.Pace(0, 0); wait != sh.Phase {
			t.Errorf("agent %d waits %v for its first send, want %v", i, wait, sh.Phase)
		}
	}
	slices.Sort(union)
	for n, due := range union {
		want := whole.Due(uint64(n))
		if d := due - want; d < -time.Microsecond || d > time.Microsecond {
			t.Fatalf("send %d at %v, the whole schedule's at %v", n, due, want)
		}
	}
}

// A plan agents cannot share says why, naming the point or field.
func TestCheckDistributed(t *testing.T) {
	base := func() *plan.Plan {
		return &plan.Plan{Servers: []plan.Server{{URL: "h:8000"}}, Measurement: plan.Measurement{Mode: plan.TimeWindows},
			Points: []plan.Point{{ID: "m/c=4", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 4}}}}
	}
	if err := CheckDistributed(base(), 4); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(p *plan.Plan){
		"point m/c=4: concurrency 4 is less than the 5 agents": func(*plan.Plan) {},
		"measurement.mode count_windows":                       func(p *plan.Plan) { p.Measurement.Mode = plan.CountWindows },
		"server.embedded":                                      func(p *plan.Plan) { p.Servers[0].Embedded = true },
		"kind openai":                                          func(p *plan.Plan) { p.Servers[0].Kind = plan.KindOpenAI },
		"point m/c=4: shared memory system":                    func(p *plan.Plan) { p.Points[0].SharedMemory = plan.ShmSystem },
		"searches: a search plans its probes as it goes":       func(p *plan.Plan) { p.Searches = []plan.Search{{Name: "max"}} },
		"load.stages: a ramp is run from one process":          func(p *plan.Plan) { p.Points[0].Stage = &plan.Stage{Index: 1} },
	}
	for want, mod := range cases {
		p := base()
		mod(p)
		err := CheckDistributed(p, 5)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

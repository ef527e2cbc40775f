package engine

import (
	"fmt"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// SessionSpec is one session of a point's load as a coordinator runs it on
// its agents: the whole load, of which each agent takes its Shard.
type SessionSpec struct {
	// ID names the session in the run.
	ID uint64
	// Point is the plan point's index.
	Point int
	// Epoch is the session clock's zero, shared by every agent.
	Epoch time.Time
	// Warmup, Window: windows are cut every Window after Warmup.
	Warmup, Window time.Duration
	// Whole: one window over the session (iterations), of Budget requests
	// in all (0: until stopped).
	Whole  bool
	Budget int64
	// The load: Concurrency workers, or Rate requests/s with at most
	// MaxThreads workers (0: the default, grown on demand).
	Concurrency  int
	Rate         float64
	Distribution plan.Distribution
	MaxThreads   int
	// Seed drives Poisson schedules.
	Seed uint64
	// Drain is how long in-flight requests may finish after a stop.
	Drain time.Duration
}

// Shard is one agent's part of a session.
type Shard struct {
	Index, Agents int
	// Workers is the agent's share of the concurrency (or its request-rate
	// pool); its workers walk the input data as WorkerBase+i of
	// WorkerTotal, so the agents together walk it as one process would.
	Workers, WorkerBase, WorkerTotal int
	// MaxWorkers caps a request-rate pool (0: grown on demand).
	MaxWorkers int
	// Rate is the agent's share of a request rate; Phase shifts its
	// constant schedule so the agents' sends interleave evenly.
	Rate  float64
	Phase time.Duration
	// Budget is the agent's share of a fixed request count.
	Budget int64
	Seed   uint64
}

// share is agent i's part of n split over agents, the first n%agents
// agents taking one more; base is where its part starts.
func share(n, i, agents int) (part, base int) {
	q, r := n/agents, n%agents
	part = q
	if i < r {
		part++
	}
	return part, i*q + min(i, r)
}

// ShardOf is agent index's part of s among agents: the concurrency and a
// request budget split as evenly as whole requests allow, a request rate
// split evenly with each agent's constant schedule shifted by index/rate
// (the union is the one schedule at the whole rate; Poisson arrivals are
// independent per agent, whose sum is Poisson at the whole rate), and the
// input data walked by every agent's workers as by one pool.
func ShardOf(s SessionSpec, index, agents int) (Shard, error) {
	if agents < 1 || index < 0 || index >= agents {
		return Shard{}, fmt.Errorf("agent %d of %d", index, agents)
	}
	sh := Shard{Index: index, Agents: agents, Seed: s.Seed + uint64(index)*0x9e3779b97f4a7c15}
	if s.Budget > 0 {
		b, _ := share(int(s.Budget), index, agents)
		sh.Budget = int64(b)
	}
	if s.Rate > 0 {
		sh.Rate = s.Rate / float64(agents)
		if s.Distribution != plan.Poisson {
			sh.Phase = time.Duration(float64(index) * float64(time.Second) / s.Rate)
		}
		workers := s.MaxThreads
		if workers <= 0 {
			workers = 4 * agents // each agent starts perf_analyzer's default pool
		}
		w, base := share(max(workers, agents), index, agents)
		sh.Workers, sh.WorkerBase, sh.WorkerTotal = w, base, max(workers, agents)
		if s.MaxThreads > 0 {
			sh.MaxWorkers = w
		}
		return sh, nil
	}
	c := max(s.Concurrency, 1)
	if c < agents {
		return Shard{}, fmt.Errorf("concurrency %d cannot be shared by %d agents: each needs at least one request outstanding", c, agents)
	}
	sh.Workers, sh.WorkerBase = share(c, index, agents)
	sh.WorkerTotal = c
	return sh, nil
}

// CheckDistributed says why p cannot be measured by agents: windows must
// close on the same boundaries on every agent (time windows), every agent
// must carry load at every point (concurrency at least the agent count),
// and the servers must be reachable from every agent (not embedded). The
// error names the field or point (exit 2).
func CheckDistributed(p *plan.Plan, agents int) error {
	if agents < 1 {
		return fmt.Errorf("--agents %d: at least one agent", agents)
	}
	if p.Measurement.Mode == plan.CountWindows {
		return fmt.Errorf("measurement.mode count_windows: agents cut time windows on one clock; count windows of several agents cannot close together (use time_windows)")
	}
	if len(p.Searches) > 0 {
		// Probes are planned as the search goes; agents run the plan they
		// were given at the barrier.
		return fmt.Errorf("searches: a search plans its probes as it goes and is run from one process, not by agents")
	}
	for _, pt := range p.Points {
		if pt.Stage != nil {
			return fmt.Errorf("load.stages: a ramp is run from one process, not by agents")
		}
	}
	for _, s := range p.Servers {
		if s.Embedded {
			name := "server"
			if s.Name != "" {
				name = "servers." + s.Name
			}
			return fmt.Errorf("%s.embedded: agents need a server they can all reach (its url), not one started inside each of them", name)
		}
		if s.Kind == plan.KindOpenAI {
			return fmt.Errorf("kind openai: token-level figures are not merged across agents yet; run it from one process")
		}
	}
	for _, pt := range p.Points {
		if pt.SharedMemory != "" && pt.SharedMemory != plan.ShmNone {
			return fmt.Errorf("point %s: shared memory %s: agents on other hosts cannot share the server's memory (use shared_memory: none)", pt.ID, pt.SharedMemory)
		}
		if pt.Load.Distribution == plan.Intervals {
			return fmt.Errorf("load.request_intervals: one schedule of sends is replayed from one process, not split among agents")
		}
		if pt.Load.Distribution == plan.TraceSchedule {
			return fmt.Errorf("point %s: a trace is replayed from one process, each request at its own time, not split among agents", pt.ID)
		}
		if pt.Load.Mode == plan.LoadRequestRate {
			continue
		}
		if c := max(pt.Load.Concurrency, 1); c < agents {
			return fmt.Errorf("point %s: concurrency %d is less than the %d agents: every agent must carry load (use at most %d agents)", pt.ID, c, agents, c)
		}
		if pt.Load.Mode == plan.LoadIterations && pt.Load.Iterations < agents {
			return fmt.Errorf("point %s: %d iterations cannot be shared by %d agents", pt.ID, pt.Load.Iterations, agents)
		}
	}
	return nil
}

// phased shifts a pacer's schedule by a constant: an agent's share of a
// constant rate sends at phase, phase + 1/rate, …
type phased struct {
	Pacer
	phase time.Duration
}

func (p phased) Due(n uint64) time.Duration { return p.phase + p.Pacer.Due(n) }

func (p phased) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	wait, stop := p.Pacer.Pace(elapsed-p.phase, sent)
	return wait, stop
}

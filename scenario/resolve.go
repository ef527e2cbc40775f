package scenario

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// resolved is the scenario after defaults and unit parsing: everything
// Expand needs, already checked.
type resolved struct {
	name        string
	server      plan.Server   // the one server; with servers, only its Protocol
	servers     []plan.Server // servers: by name; nil for server:
	models      []plan.Model
	batch       []int                // per model
	shapes      []map[string][]int64 // per model
	load        plan.Load
	shm         string
	outShm      int64
	measurement plan.Measurement
	sweep       sweepDims
	checks      plan.Checks
	llm         *plan.LLM // openai kind only
	mixes       []resolvedMix
	stages      []plan.Stage
	searches    []searchSpec
	// searchChecks are the thresholds searches state on their figures.
	searchChecks []plan.Threshold
	abortOn      []plan.Threshold
	// searchDistribution is load.distribution for request_rate searches
	// of a scenario whose own load is a concurrency.
	searchDistribution plan.Distribution
	// searchOnly: the scenario searches and names no load level of its
	// own, so the sweep has no points (only the searches' probes).
	searchOnly bool
	// traceLoads, per model, is the load of a model replaying a trace
	// (nil for the others); nil when no model does.
	traceLoads []*plan.Load
}

// sweepDims holds the swept values; nil means "not swept".
type sweepDims struct {
	concurrency []int
	rate        []float64
	batch       []int
	shapeSets   []ShapeSet
	protocol    []plan.Protocol
	shm         []string
	inTokens    []int // kind openai: prompt length means
	outTokens   []int // kind openai: max_tokens means
}

// Defaults, perf_analyzer's where it has one (perf_analyzer.md §2.1).
const (
	DefaultTimeout      = 30 * time.Second
	DefaultWindow       = 5 * time.Second
	DefaultRequestCount = 50
	DefaultStabilityPct = 10
	DefaultMaxTrials    = 10
	DefaultTrials       = 10
	DefaultStringLength = 128
	// DefaultOutputShmSize is perf_analyzer's output region size per batch
	// element; perfscen uses it only for an output it can size neither from
	// the model's shapes nor from a reply (output_shared_memory_size unset).
	DefaultOutputShmSize = 102400
)

// resolve applies defaults and checks what the schema cannot express.
func resolve(s *Scenario, c *collector, getenv func(string) string, dir string) *resolved {
	r := &resolved{name: s.Name}
	if r.name == "" {
		base := filepath.Base(s.Path)
		r.name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	r.server, r.servers = resolveServers(s, c, getenv, dir)
	resolveModels(s, c, r, dir)
	resolveLLM(s, c, r, getenv)
	resolveLoad(s, c, r, dir)
	resolveStages(s, c, r)
	resolveSweep(s, c, r)
	resolveWorkloads(s, c, r, dir)
	resolveEndpoints(s, c, r)
	r.measurement = resolveMeasurement(s, c)
	resolveMixes(s, c, r)
	resolveSearches(s, c, r)
	r.searchOnly = len(r.searches) > 0 && len(r.stages) == 0 && r.load.Mode != plan.LoadIterations &&
		s.Load.Concurrency == 0 && s.Load.RequestRate == 0 && len(s.Sweep.Concurrency) == 0 && len(s.Sweep.RequestRate) == 0
	resolveAbortOn(s, c, r)
	resolveChecks(s, c, r, dir)
	r.checks.Thresholds = append(r.checks.Thresholds, r.searchChecks...)
	return r
}

func rel(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

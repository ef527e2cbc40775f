package scenario

import (
	"errors"
	"maps"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
)

// Expand turns a loaded scenario into the run plan: the cartesian product
// of the swept dimensions for every model, in execution order. Order is
// coordinate-major (protocol, shared memory, shape set, batch size, input
// and output token lengths, then the load level innermost, ascending as
// perf_analyzer sweeps) with models inner, so points that are compared run
// next to each other.
func Expand(s *Scenario) (*plan.Plan, error) {
	if s == nil || s.res == nil {
		return nil, errors.New("expanding scenario: not loaded with scenario.Load")
	}
	r := s.res
	p := &plan.Plan{
		Scenario:     r.name,
		ScenarioPath: s.Path,
		ScenarioHash: s.Hash,
		Servers:      r.servers,
		Models:       r.models,
		Measurement:  r.measurement,
		Checks:       r.checks,
		LLM:          r.llm,
		AbortOn:      r.abortOn,
		Overrides:    s.Overrides,
	}
	if len(r.servers) == 0 {
		p.Servers = []plan.Server{r.server}
	}
	if len(r.mixes) > 0 {
		p.Models, p.Mixes = r.mixModels(), r.mixPlan()
		r.expandMixes(p)
		return p, nil
	}
	groups := newGrouper(r)
	for _, proto := range r.protocols() {
		for _, shm := range orOne(r.sweep.shm, r.shm) {
			for _, ss := range shapeSetsOrNone(r.sweep.shapeSets) {
				for _, b := range orOneInt(r.sweep.batch, 0) {
					for _, in := range orOneInt(r.sweep.inTokens, 0) {
						for _, out := range orOneInt(r.sweep.outTokens, 0) {
							if len(r.stages) > 0 {
								for _, st := range r.stages {
									for mi, m := range r.models {
										pt := r.stagePoint(mi, m, proto, shm, ss, b, tokens{in, out}, st)
										p.Points = append(p.Points, pt)
									}
								}
								continue
							}
							if r.searchOnly {
								continue
							}
							for _, lv := range r.loadLevels() {
								for mi, m := range r.models {
									pt := r.point(mi, m, proto, shm, ss, b, tokens{in, out}, lv)
									pt.Group = groups.group(m.Alias, pt.ID)
									p.Points = append(p.Points, pt)
								}
							}
						}
					}
				}
			}
		}
	}
	p.Searches = r.expandSearches()
	if p.Points == nil {
		p.Points = []plan.Point{} // a scenario of searches alone
	}
	return p, nil
}

// expandMixes is Expand for a scenario with mixes: the same coordinate
// order, the load sweep's value as the step, and at each step every mix
// with its members' own loads.
func (r *resolved) expandMixes(p *plan.Plan) {
	levels, swept := r.mixLevels()
	together, group := 0, 0
	groups := newMixGrouper(r, &group)
	for _, proto := range r.protocols() {
		for _, shm := range orOne(r.sweep.shm, r.shm) {
			for _, ss := range shapeSetsOrNone(r.sweep.shapeSets) {
				for _, b := range orOneInt(r.sweep.batch, 0) {
					for _, in := range orOneInt(r.sweep.inTokens, 0) {
						for _, out := range orOneInt(r.sweep.outTokens, 0) {
							mk := func(mi int, alias string, l plan.Load) plan.Point {
								m := r.models[mi]
								m.Alias = alias
								pt := r.point(mi, m, proto, shm, ss, b, tokens{in, out}, loadLevel{concurrency: l.Concurrency, rate: l.Rate})
								pt.Load = l
								return pt
							}
							for _, lv := range levels {
								r.mixPoints(p, groups, mk, lv, swept, &together)
							}
						}
					}
				}
			}
		}
	}
}

// stagePoint is one stage of load.stages for one model: the point of the
// sweep's other coordinates, its load ramped, its id and coordinates
// naming the stage.
func (r *resolved) stagePoint(mi int, m plan.Model, proto plan.Protocol, shm string, ss *ShapeSet, batch int, tok tokens, st plan.Stage) plan.Point {
	lv := loadLevel{concurrency: max(int(st.To), 1), rate: st.To}
	pt := r.point(mi, m, proto, shm, ss, batch, tok, lv)
	stage := strconv.Itoa(st.Index)
	delete(pt.Coords, CoordConcurrency)
	delete(pt.Coords, CoordRequestRate)
	pt.Coords[CoordStage] = stage
	_, rest, _ := strings.Cut(strings.TrimPrefix(pt.ID, m.Alias+"/"), ",")
	pt.ID = m.Alias + "/stage=" + stage
	if rest != "" {
		pt.ID += "," + rest
	}
	stg := st
	pt.Stage = &stg
	return pt
}

// expandSearches gives each search, for each of its models, the template
// its probes are built from: the model at the scenario's first protocol,
// shared memory, shape set and batch size, in the searched load's mode.
func (r *resolved) expandSearches() []plan.Search {
	var out []plan.Search
	for _, sp := range r.searches {
		for _, alias := range sp.models {
			mi := -1
			for i, m := range r.models {
				if m.Alias == alias {
					mi = i
				}
			}
			if mi < 0 {
				continue
			}
			m := r.models[mi]
			var ss *ShapeSet
			if len(r.sweep.shapeSets) > 0 {
				ss = &r.sweep.shapeSets[0]
			}
			batch := 0
			if len(r.sweep.batch) > 0 {
				batch = r.sweep.batch[0]
			}
			lv := loadLevel{concurrency: int(sp.start), rate: sp.start}
			pt := r.point(mi, m, r.protocols()[0], orOne(r.sweep.shm, r.shm)[0], ss, batch, tokens{}, lv)
			pt.Load.Iterations, pt.Load.WarmupIterations = 0, 0
			if sp.metric == plan.MetricMaxConcurrency {
				pt.Load.Mode, pt.Load.Rate, pt.Load.Distribution = plan.LoadConcurrency, 0, ""
				pt.Load.Concurrency = int(sp.start)
				delete(pt.Coords, CoordRequestRate)
			} else {
				pt.Load.Mode, pt.Load.Concurrency, pt.Load.Rate = plan.LoadRequestRate, 0, sp.start
				if pt.Load.Distribution == "" {
					pt.Load.Distribution = r.searchDistribution
				}
				if pt.Load.Distribution == "" {
					pt.Load.Distribution = plan.Constant
				}
				delete(pt.Coords, CoordConcurrency)
			}
			pt.Group = 0
			out = append(out, plan.Search{
				Name: sp.name, Model: alias, Metric: sp.metric, Start: sp.start, End: sp.end, Step: sp.step,
				Method: sp.method, Condition: sp.cond, SLOLatencyUs: sp.sloUs, Decide: sp.decide,
				Confidence: sp.confidence, MaxExtraTrials: sp.maxExtra, Template: pt,
			})
		}
	}
	return out
}

// loadLevel is one value of the load dimension.
type loadLevel struct {
	concurrency int
	rate        float64
}

func (r *resolved) loadLevels() []loadLevel {
	if r.load.Mode == plan.LoadRequestRate {
		var out []loadLevel
		for _, v := range orOneFloat(r.sweep.rate, r.load.Rate) {
			out = append(out, loadLevel{rate: v})
		}
		return out
	}
	var out []loadLevel
	for _, v := range orOneInt(r.sweep.concurrency, r.load.Concurrency) {
		out = append(out, loadLevel{concurrency: v})
	}
	return out
}

// tokens are a point's swept prompt lengths; 0 is not swept.
type tokens struct{ in, out int }

// point builds one cell; batch 0 means "the model's own batch size".
func (r *resolved) point(mi int, m plan.Model, proto plan.Protocol, shmName string, ss *ShapeSet, batch int, tok tokens, lv loadLevel) plan.Point {
	if batch == 0 {
		batch = r.batch[mi]
	}
	load := r.load
	load.Concurrency, load.Rate = lv.concurrency, lv.rate
	shm := plan.SharedMemory(shmName)
	pt := plan.Point{
		Model:        m.Alias,
		Server:       m.Server,
		Protocol:     proto,
		SharedMemory: shm,
		BatchSize:    batch,
		Load:         load,
		Coords: map[string]string{
			CoordBatchSize:    strconv.Itoa(batch),
			CoordProtocol:     string(proto),
			CoordSharedMemory: shmName,
		},
	}
	if shm != plan.ShmNone {
		pt.OutputShmSize = r.outShm
	}
	var id []string
	if r.traceLoads != nil && r.traceLoads[mi] != nil {
		// A trace's point is the trace: its rate is the trace's mean.
		load = *r.traceLoads[mi]
		pt.Load = load
		pt.Coords[CoordRequestRate] = formatNumber(load.Rate)
		id = append(id, "trace")
		if sp := m.Trace.Speedup; sp != 1 {
			id[0] += "=x" + formatNumber(sp)
		}
	} else if load.Mode == plan.LoadRequestRate {
		v := formatNumber(lv.rate)
		pt.Coords[CoordRequestRate] = v
		id = append(id, "r="+v)
	} else {
		v := strconv.Itoa(lv.concurrency)
		pt.Coords[CoordConcurrency] = v
		id = append(id, "c="+v)
	}
	if r.sweep.batch != nil {
		id = append(id, "b="+strconv.Itoa(batch))
	}
	if tok.in > 0 {
		pt.InputTokens = tok.in
		pt.Coords[CoordInputTokens] = strconv.Itoa(tok.in)
		id = append(id, "in="+strconv.Itoa(tok.in))
	}
	if tok.out > 0 {
		pt.OutputTokens = tok.out
		pt.Coords[CoordOutputTokens] = strconv.Itoa(tok.out)
		id = append(id, "out="+strconv.Itoa(tok.out))
	}
	if len(r.shapes[mi]) > 0 || ss != nil {
		pt.Shapes = map[string][]int64{}
		maps.Copy(pt.Shapes, r.shapes[mi])
	}
	if ss != nil {
		maps.Copy(pt.Shapes, ss.Shapes)
		pt.ShapeSet = ss.Name
		pt.Coords[CoordShapeSet] = ss.Name
		id = append(id, "shape="+ss.Name)
	}
	if r.sweep.protocol != nil {
		id = append(id, "proto="+string(proto))
	}
	if r.sweep.shm != nil {
		id = append(id, "shm="+shmName)
	}
	pt.ID = m.Alias + "/" + strings.Join(id, ",")
	return pt
}

func orOne(vals []string, def string) []string {
	if len(vals) == 0 {
		return []string{def}
	}
	return vals
}

func orOneInt(vals []int, def int) []int {
	if len(vals) == 0 {
		return []int{def}
	}
	return vals
}

func orOneFloat(vals []float64, def float64) []float64 {
	if len(vals) == 0 {
		return []float64{def}
	}
	return vals
}

func shapeSetsOrNone(sets []ShapeSet) []*ShapeSet {
	if len(sets) == 0 {
		return []*ShapeSet{nil}
	}
	out := make([]*ShapeSet, len(sets))
	for i := range sets {
		out[i] = &sets[i]
	}
	return out
}

// grouper numbers the sets of points that must run interleaved: models
// joined by comparisons (transitively) at the same sweep coordinates.
type grouper struct {
	component map[string]string // alias -> representative
	ids       map[string]int
}

func newGrouper(r *resolved) *grouper {
	parent := map[string]string{}
	var find func(string) string
	find = func(a string) string {
		p, ok := parent[a]
		if !ok {
			parent[a] = a
			return a
		}
		if p == a {
			return a
		}
		root := find(p)
		parent[a] = root
		return root
	}
	for _, c := range r.checks.Comparisons {
		parent[find(c.Reference)] = find(c.Candidate)
	}
	g := &grouper{component: map[string]string{}, ids: map[string]int{}}
	for a := range parent {
		g.component[a] = find(a)
	}
	return g
}

func (g *grouper) group(alias, id string) int {
	root, ok := g.component[alias]
	if !ok {
		return 0
	}
	// The id is alias/coordinates; an alias may hold a slash (server/model).
	key := root + "|" + strings.TrimPrefix(id, alias+"/")
	if n, ok := g.ids[key]; ok {
		return n
	}
	n := len(g.ids) + 1
	g.ids[key] = n
	return n
}

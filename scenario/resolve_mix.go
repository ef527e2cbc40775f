package scenario

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
)

// sweepValue is the word a mix load gives to follow the scenario's sweep.
const sweepValue = "sweep"

// resolvedMix is one mix after defaults and checks.
type resolvedMix struct {
	name string
	// rate is the total that shares divide; rateSwept follows
	// sweep.request_rate instead.
	rate      float64
	rateSwept bool
	members   []mixMember // in the order of models:
}

// mixMember is one model's load in a mix.
type mixMember struct {
	model int // index into resolved.models
	mode  plan.LoadMode
	// concurrency, rate or share (a fraction of the mix's rate); swept
	// follows the step's value of the sweep instead.
	concurrency int
	rate        float64
	share       float64
	swept       bool
}

// resolveMixes checks the mixes: their models exist, each has exactly one
// load, shares have a total to divide and do not exceed it, "sweep" has a
// sweep to follow, and the run can cut every member's windows on the same
// boundaries (time windows, no fixed request counts).
func resolveMixes(s *Scenario, c *collector, r *resolved) {
	if len(s.Mixes) == 0 {
		return
	}
	if r.measurement.Mode == plan.CountWindows {
		c.at(path{"measurement", "mode"}, "mixes need time_windows: count windows of several models cannot close on the same boundaries")
	}
	if r.load.Mode == plan.LoadIterations {
		c.at(path{"load", "mode"}, "mixes measure windows; mode iterations has none (give each model its load under mixes)")
	}
	// A search probes one model at a time and a ramp changes one model's
	// load; in a mix every model's load is the mix's.
	if len(s.Searches) > 0 {
		c.atKey(path{"searches"}, "searches probe one model at a time; they cannot be combined with mixes (search in a scenario of its own)")
	}
	if len(s.Load.Stages) > 0 {
		c.atKey(path{"load", "stages"}, "load.stages ramp one model's load; they cannot be combined with mixes")
	}
	for _, g := range []struct {
		key   string
		given bool
	}{{"concurrency", s.Load.Concurrency != 0}, {"request_rate", s.Load.RequestRate != 0}} {
		if g.given {
			c.atKey(path{"load", g.key}, "with mixes, each model's load is given in its mix (mixes[].models)")
		}
	}
	aliases := map[string]int{}
	var aliasList []string
	for i, m := range r.models {
		aliases[m.Alias] = i
		aliasList = append(aliasList, m.Alias)
	}
	names := map[string]bool{}
	followsConc, followsRate := false, false
	for i, in := range s.Mixes {
		p := path{"mixes", i}
		if names[in.Name] {
			c.at(p.child("name"), "mix name `%s` is used twice", in.Name)
		}
		names[in.Name] = true
		if _, clash := aliases[in.Name]; clash {
			c.at(p.child("name"), "mix name `%s` is also a model alias; checks could not tell them apart", in.Name)
		}
		mx := resolvedMix{name: in.Name}
		switch in.RequestRate {
		case "":
		case sweepValue:
			mx.rateSwept = true
			followsRate = true
			if r.sweep.rate == nil {
				c.at(p.child("request_rate"), "follows the sweep, but the scenario has no sweep.request_rate")
			}
		default:
			v, err := strconv.ParseFloat(in.RequestRate, 64)
			if err != nil || v <= 0 {
				c.at(p.child("request_rate"), "%q is neither a positive rate nor sweep", in.RequestRate)
			}
			mx.rate = v
		}
		keys := make([]string, 0, len(in.Models))
		for k := range in.Models {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var shares float64
		hasShare := false
		byModel := map[string]string{} // server|model name → member key
		for _, key := range keys {
			mp := p.child("models", key)
			alias, msg := r.modelRef(key, mapKeys(aliases), aliasList)
			if msg != "" {
				c.atKey(mp, "%s", msg)
				continue
			}
			mi := aliases[alias]
			pm := r.models[mi]
			if other, dup := byModel[pm.Server+"|"+pm.Name]; dup {
				c.atKey(mp, "`%s` and `%s` are both model %s on one server: the server's figures of the two could not be told apart", other, key, pm.Name)
				continue
			}
			byModel[pm.Server+"|"+pm.Name] = key
			mm, ok := resolveMixLoad(c, mp, in.Models[key], r, &mx)
			if !ok {
				continue
			}
			mm.model = mi
			if mm.share > 0 {
				shares += mm.share
				hasShare = true
			}
			followsConc = followsConc || (mm.swept && mm.mode == plan.LoadConcurrency)
			followsRate = followsRate || (mm.swept && mm.mode == plan.LoadRequestRate)
			mx.members = append(mx.members, mm)
		}
		// Members run in the order of models:, so plans do not depend on
		// how the mapping was written.
		sort.SliceStable(mx.members, func(a, b int) bool { return mx.members[a].model < mx.members[b].model })
		switch {
		case hasShare && mx.rate == 0 && !mx.rateSwept && in.RequestRate == "":
			c.at(p, "models given as share need the mix's request_rate (the total they divide)")
		case !hasShare && in.RequestRate != "":
			c.atKey(p.child("request_rate"), "no model of the mix is given as share of it")
		case shares > 1+1e-9:
			c.at(p.child("models"), "the shares add up to %s of the mix's request_rate; at most 100%%", formatNumber(math.Round(shares*1e4)/100)+"%")
		}
		r.mixes = append(r.mixes, mx)
	}
	if r.sweep.concurrency != nil && !followsConc {
		c.atKey(path{"sweep", "concurrency"}, "no model of a mix follows it (give a model concurrency: sweep)")
	}
	if r.sweep.rate != nil && !followsRate {
		c.atKey(path{"sweep", "request_rate"}, "no mix or model of a mix follows it (give request_rate: sweep)")
	}
}

// resolveMixLoad checks one member's load: exactly one of concurrency,
// request_rate and share.
func resolveMixLoad(c *collector, p path, in MixLoad, r *resolved, mx *resolvedMix) (mixMember, bool) {
	var given []string
	for _, g := range []struct{ key, v string }{{"concurrency", in.Concurrency}, {"request_rate", in.RequestRate}, {"share", in.Share}} {
		if g.v != "" {
			given = append(given, g.key)
		}
	}
	if len(given) != 1 {
		if len(given) == 0 {
			c.at(p, "give the model's load: one of concurrency, request_rate or share")
		} else {
			c.at(p, "the loads conflict: %s are given; give one", strings.Join(given, " and "))
		}
		return mixMember{}, false
	}
	m := mixMember{}
	switch {
	case in.Concurrency != "":
		m.mode = plan.LoadConcurrency
		if in.Concurrency == sweepValue {
			m.swept = true
			if r.sweep.concurrency == nil {
				c.at(p.child("concurrency"), "follows the sweep, but the scenario has no sweep.concurrency")
				return m, false
			}
			return m, true
		}
		n, err := strconv.Atoi(in.Concurrency)
		if err != nil || n < 1 {
			c.at(p.child("concurrency"), "%q is neither a concurrency of at least 1 nor sweep", in.Concurrency)
			return m, false
		}
		if !checkConcurrency(c, p.child("concurrency"), n) {
			return m, false
		}
		m.concurrency = n
	case in.RequestRate != "":
		m.mode = plan.LoadRequestRate
		if in.RequestRate == sweepValue {
			m.swept = true
			if r.sweep.rate == nil {
				c.at(p.child("request_rate"), "follows the sweep, but the scenario has no sweep.request_rate")
				return m, false
			}
			return m, true
		}
		v, err := strconv.ParseFloat(in.RequestRate, 64)
		if err != nil || v <= 0 {
			c.at(p.child("request_rate"), "%q is neither a positive rate nor sweep", in.RequestRate)
			return m, false
		}
		m.rate = v
	default:
		m.mode = plan.LoadRequestRate
		v, err := ParsePercent(in.Share, false)
		if err != nil || v <= 0 {
			c.at(p.child("share"), "a share must be a percentage above 0%%")
			return m, false
		}
		m.share = v / 100
	}
	return m, true
}

func mapKeys(m map[string]int) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// mixModels are the plan's models of the mixes: one per member, a copy of
// the scenario's model under the alias mix/alias.
func (r *resolved) mixModels() []plan.Model {
	var out []plan.Model
	for _, mx := range r.mixes {
		for _, mm := range mx.members {
			m := r.models[mm.model]
			m.Base = m.Alias
			m.Alias = mx.name + "/" + m.Alias
			m.Mix = mx.name
			out = append(out, m)
		}
	}
	return out
}

// mixPlan is the mixes' part of the plan.
func (r *resolved) mixPlan() []plan.Mix {
	var out []plan.Mix
	for _, mx := range r.mixes {
		pm := plan.Mix{Name: mx.name}
		for _, mm := range mx.members {
			pm.Members = append(pm.Members, mx.name+"/"+r.models[mm.model].Alias)
		}
		out = append(out, pm)
	}
	return out
}

// memberLoad is a member's load at a step whose swept value is level.
func (mx *resolvedMix) memberLoad(mm mixMember, base plan.Load, level loadLevel) plan.Load {
	l := base
	l.Mode = mm.mode
	l.Concurrency, l.Rate = 0, 0
	l.Iterations, l.WarmupIterations = 0, 0
	switch {
	case mm.mode == plan.LoadConcurrency && mm.swept:
		l.Concurrency = level.concurrency
	case mm.mode == plan.LoadConcurrency:
		l.Concurrency = mm.concurrency
	case mm.swept:
		l.Rate = level.rate
	case mm.share > 0:
		total := mx.rate
		if mx.rateSwept {
			total = level.rate
		}
		l.Rate = total * mm.share
	default:
		l.Rate = mm.rate
	}
	if l.Mode == plan.LoadRequestRate && l.Distribution == "" {
		l.Distribution = plan.Constant
	}
	return l
}

// mixLevels are the steps of the load sweep the mixes follow; one step
// (the zero level, no coordinate) without one.
func (r *resolved) mixLevels() (levels []loadLevel, swept bool) {
	switch {
	case r.sweep.concurrency != nil:
		for _, v := range r.sweep.concurrency {
			levels = append(levels, loadLevel{concurrency: v})
		}
		return levels, true
	case r.sweep.rate != nil:
		for _, v := range r.sweep.rate {
			levels = append(levels, loadLevel{rate: v})
		}
		return levels, true
	}
	return []loadLevel{{}}, false
}

// loadID is a load's part of a point id: c=N or r=R.
func loadID(l plan.Load) string {
	if l.Mode == plan.LoadRequestRate {
		return "r=" + formatNumber(l.Rate)
	}
	return "c=" + strconv.Itoa(l.Concurrency)
}

// stepID is a step's part of a point id: the swept level and the other
// swept dimensions' values, or "" for the one step of an unswept mix.
func stepID(level loadLevel, swept bool, rest []string) string {
	var parts []string
	if swept {
		if level.rate > 0 {
			parts = append(parts, "r="+formatNumber(level.rate))
		} else {
			parts = append(parts, "c="+strconv.Itoa(level.concurrency))
		}
	}
	parts = append(parts, rest...)
	return strings.Join(parts, ",")
}

// mixPoints adds the points of one step of every mix: for each mix, its
// members with their own loads, joined by a Together id, and grouped for
// interleaving with the mixes they are compared with at the same step.
func (r *resolved) mixPoints(p *plan.Plan, g *mixGrouper, mk func(mi int, alias string, l plan.Load) plan.Point, level loadLevel, swept bool, together *int) {
	for _, mx := range r.mixes {
		*together++
		for _, mm := range mx.members {
			m := r.models[mm.model]
			alias := mx.name + "/" + m.Alias
			l := mx.memberLoad(mm, r.load, level)
			pt := mk(mm.model, alias, l)
			pt.Mix, pt.Together = mx.name, *together
			delete(pt.Coords, CoordConcurrency)
			delete(pt.Coords, CoordRequestRate)
			if swept {
				if level.rate > 0 {
					pt.Coords[CoordRequestRate] = formatNumber(level.rate)
				} else {
					pt.Coords[CoordConcurrency] = strconv.Itoa(level.concurrency)
				}
			}
			// The id: the member's own load, then the step.
			rest := strings.Split(strings.TrimPrefix(pt.ID, alias+"/"), ",")[1:]
			step := stepID(level, swept, rest)
			pt.ID = alias + "/" + loadID(l)
			if step != "" {
				pt.ID += "@" + step
			}
			pt.Group = g.group(mx.name, step)
			p.Points = append(p.Points, pt)
		}
	}
}

// mixGrouper numbers the steps of mixes joined by comparisons: the mixes of
// compared models (members or whole mixes), transitively, at one step.
type mixGrouper struct {
	component map[string]string
	ids       map[string]int
	next      *int
}

func newMixGrouper(r *resolved, next *int) *mixGrouper {
	parent := map[string]string{}
	var find func(string) string
	find = func(a string) string {
		p, ok := parent[a]
		if !ok || p == a {
			parent[a] = a
			return a
		}
		root := find(p)
		parent[a] = root
		return root
	}
	mixOf := func(alias string) string {
		mix, _, _ := strings.Cut(alias, "/")
		return mix
	}
	for _, c := range r.checks.Comparisons {
		parent[find(mixOf(c.Reference))] = find(mixOf(c.Candidate))
	}
	g := &mixGrouper{component: map[string]string{}, ids: map[string]int{}, next: next}
	for a := range parent {
		g.component[a] = find(a)
	}
	return g
}

func (g *mixGrouper) group(mix, step string) int {
	root, ok := g.component[mix]
	if !ok {
		return 0
	}
	key := root + "|" + step
	if n, ok := g.ids[key]; ok {
		return n
	}
	*g.next++
	g.ids[key] = *g.next
	return *g.next
}

// mixRefs are the names checks may give under mixes: every member
// (mix/alias, or mix/server/alias) and every whole mix (its name).
func (r *resolved) mixRefs() (aliases map[string]bool, list []string) {
	aliases = map[string]bool{}
	for _, mx := range r.mixes {
		if len(mx.members) > 1 {
			// A mix of one model has no figures apart from its model's.
			aliases[mx.name] = true
			list = append(list, mx.name)
		}
		for _, mm := range mx.members {
			a := mx.name + "/" + r.models[mm.model].Alias
			aliases[a] = true
			list = append(list, a)
		}
	}
	return aliases, list
}

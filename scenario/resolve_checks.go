package scenario

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner/plan"
)

func resolveChecks(s *Scenario, c *collector, r *resolved, dir string) {
	aliases := map[string]bool{}
	var aliasList []string
	for _, m := range r.models {
		aliases[m.Alias] = true
		aliasList = append(aliasList, m.Alias)
	}
	if len(s.Mixes) > 0 {
		// Under mixes checks name members (mix/alias) and whole mixes.
		aliases, aliasList = r.mixRefs()
	}
	coords := r.coordValues()
	for i, t := range s.Thresholds {
		p := path{"thresholds", i}
		exprPath := p
		if c.isMapping(p) {
			exprPath = p.child("check")
		}
		th, err := ParseThreshold(t.Check)
		if err != nil {
			c.at(exprPath, "%v", err)
			continue
		}
		var models []string
		for j, m := range t.Models {
			a, msg := r.modelRef(m, aliases, aliasList)
			if msg != "" {
				c.at(p.child("models", j), "%s", msg)
			}
			models = append(models, a)
		}
		th.Selector = plan.Selector{Models: models, At: resolveAt(c, p.child("at"), t.At, coords)}
		r.checks.Thresholds = append(r.checks.Thresholds, th)
	}
	names := map[string]bool{}
	for i, cmp := range s.Comparisons {
		p := path{"comparisons", i}
		pc, ok := resolveComparison(c, p, cmp, r, aliases, aliasList)
		if !ok {
			continue
		}
		pc.Selector = plan.Selector{At: resolveAt(c, p.child("at"), cmp.At, coords)}
		if names[pc.Name] {
			c.at(p, "comparison name `%s` is used twice; set distinct names", pc.Name)
		}
		names[pc.Name] = true
		r.checks.Comparisons = append(r.checks.Comparisons, pc)
	}
	// A comparison is decided on each arm's kept trials, and cannot pass
	// on fewer than plan.MinComparisonTrials: a scenario that keeps fewer
	// would measure its whole load and then fail every comparison, an
	// unchanged pair included. That is known now.
	trialed := false // a comparison of per-trial figures, not of two searches' values
	for _, pc := range r.checks.Comparisons {
		trialed = trialed || !plan.IsSearchMetric(pc.Metric)
	}
	if trialed && r.traceLoads != nil {
		c.at(path{"comparisons"}, "a trace is replayed once, in one window: its points have one trial, and a comparison needs at least %d per arm; gate a trace on thresholds and its baseline history", plan.MinComparisonTrials)
	} else if trialed && r.measurement.Trials < plan.MinComparisonTrials {
		c.at(path{"measurement", "trials"}, "%d kept trial(s) per point are too few for comparisons: each arm needs at least %d (a comparison with fewer can never pass, however alike the arms); set measurement.trials: %d or more",
			r.measurement.Trials, plan.MinComparisonTrials, plan.MinComparisonTrials)
	}
	if s.Baseline != nil {
		r.checks.Baseline = resolveBaseline(c, s.Baseline, r.name, dir)
	}
	r.checks.Gate = resolveGate(c, s.Gate)
}

// Gate defaults: up to two more rounds of the default 10 trials, and at
// most 3 minutes spent on them.
const (
	DefaultMaxExtraTrials = 20
	DefaultMaxExtraTime   = 3 * time.Minute
)

func resolveGate(c *collector, in *Gate) plan.Gate {
	g := plan.Gate{MaxExtraTrials: DefaultMaxExtraTrials, MaxExtraTime: DefaultMaxExtraTime}
	if in == nil {
		return g
	}
	p := path{"gate"}
	if in.MaxExtraTrials != nil {
		if *in.MaxExtraTrials < 0 {
			c.at(p.child("max_extra_trials"), "must be 0 (no extra trials) or more")
		}
		g.MaxExtraTrials = *in.MaxExtraTrials
	}
	if in.MaxExtraTime != "" {
		d, err := ParseDuration(in.MaxExtraTime)
		if err != nil {
			c.at(p.child("max_extra_time"), "%v", err)
		}
		g.MaxExtraTime = d
	}
	g.RequireGated = in.RequireGated
	return g
}

// isMapping says whether the value at p was written as a mapping.
func (c *collector) isMapping(p path) bool {
	n := c.lookup(p, false)
	return n != nil && n.Kind == yaml.MappingNode
}

// An arm is alias.metric, or server/alias.metric under servers:.
// Under mixes an arm is mix/alias (mix/server/alias) or a whole mix.
var sentenceRE = regexp.MustCompile(`^\s*([A-Za-z_][\w-]*(?:/[A-Za-z_][\w-]*){0,2})\.(\w+)\s*(>=|<=)\s*(?:([0-9]*\.?[0-9]+)\s*\*\s*)?([A-Za-z_][\w-]*(?:/[A-Za-z_][\w-]*){0,2})\.(\w+)\s*$`)

func resolveComparison(c *collector, p path, in Comparison, r *resolved, aliases map[string]bool, aliasList []string) (plan.Comparison, bool) {
	if in.Sentence != "" {
		m := sentenceRE.FindStringSubmatch(in.Sentence)
		if m == nil {
			c.at(p, "%q is not a comparison (form: \"cand.metric >= 1.15 * ref.metric\", or use a mapping with candidate, reference, metric, min_ratio)", in.Sentence)
			return plan.Comparison{}, false
		}
		if m[2] != m[6] {
			c.at(p, "both sides must use the same metric (%s vs %s)", m[2], m[6])
			return plan.Comparison{}, false
		}
		ratio := 1.0
		if m[4] != "" {
			ratio, _ = strconv.ParseFloat(m[4], 64)
		}
		in.Candidate, in.Metric, in.Reference = m[1], m[2], m[5]
		if ratio <= 0 {
			c.at(p, "the factor must be > 0")
			return plan.Comparison{}, false
		}
		if m[3] == ">=" {
			in.MinRatio = ratio
		} else {
			in.MaxRatio = ratio
		}
	}
	ok := true
	for _, side := range []struct {
		key   string
		alias *string
	}{{"candidate", &in.Candidate}, {"reference", &in.Reference}} {
		a, msg := r.modelRef(*side.alias, aliases, aliasList)
		if msg != "" {
			c.at(fieldOr(p, side.key, in.Sentence), "%s", msg)
			ok = false
		}
		*side.alias = a
	}
	if ok && in.Candidate == in.Reference {
		c.at(fieldOr(p, "reference", in.Sentence), "a comparison needs two different models (both are `%s`)", in.Candidate)
		ok = false
	}
	metric, err := CanonicalMetric(in.Metric)
	if err != nil {
		c.at(fieldOr(p, "metric", in.Sentence), "%v", err)
		ok = false
	}
	if (in.MinRatio == 0) == (in.MaxRatio == 0) {
		c.at(p, "give exactly one of min_ratio (candidate/reference at least) or max_ratio (at most)")
		ok = false
	} else if u := in.UnchangedRatio; u != 0 {
		// An unchanged candidate must be able to pass: the unchanged
		// ratio lies strictly on the passing side of the bound.
		switch {
		case u < 0 || math.IsNaN(u):
			c.at(p.child("unchanged_ratio"), "must be > 0 (the ratio of two arms that do not differ, usually 1)")
			ok = false
		case in.MaxRatio > 0 && u >= in.MaxRatio:
			c.at(p.child("unchanged_ratio"), "%s must lie below max_ratio %s: an unchanged candidate could never pass", numfmt.Significant(u, 6), numfmt.Significant(in.MaxRatio, 6))
			ok = false
		case in.MinRatio > 0 && u <= in.MinRatio:
			c.at(p.child("unchanged_ratio"), "%s must lie above min_ratio %s: an unchanged candidate could never pass", numfmt.Significant(u, 6), numfmt.Significant(in.MinRatio, 6))
			ok = false
		}
	}
	if !ok {
		return plan.Comparison{}, false
	}
	out := plan.Comparison{
		Name:      in.Name,
		Candidate: in.Candidate,
		Reference: in.Reference,
		Metric:    metric,
		MinRatio:  in.MinRatio,
		MaxRatio:  in.MaxRatio,
		Alpha:     in.Alpha,

		UnchangedRatio: in.UnchangedRatio,
	}
	if out.Name == "" {
		out.Name = fmt.Sprintf("%s-vs-%s-%s", in.Candidate, in.Reference, metric)
	}
	if out.Alpha == 0 {
		out.Alpha = plan.DefaultAlpha
	}
	return out, true
}

// modelRef resolves a model named in a check to its alias. Under servers:
// a name is server/alias; without the server it is the only server's
// model, and ambiguous when there are several. msg is the problem, or "".
func (r *resolved) modelRef(ref string, aliases map[string]bool, aliasList []string) (alias, msg string) {
	if aliases[ref] {
		return ref, ""
	}
	if len(r.servers) == 0 {
		return ref, fmt.Sprintf("no model has alias `%s`%s", ref, suggestOrList(ref, aliasList))
	}
	srv, _, qualified := strings.Cut(ref, "/")
	switch {
	case !qualified && len(r.servers) == 1:
		if q := r.servers[0].Name + "/" + ref; aliases[q] {
			return q, ""
		}
	case !qualified:
		var on []string
		for _, a := range aliasList {
			if strings.HasSuffix(a, "/"+ref) {
				on = append(on, a)
			}
		}
		if len(on) == 0 {
			on = append(on, aliasList...)
		}
		sort.Strings(on)
		return ref, fmt.Sprintf("`%s` names no server; with several servers write server/model: %s", ref, strings.Join(on, ", "))
	case !r.hasServer(srv):
		return ref, fmt.Sprintf("unknown server `%s` in `%s`%s", srv, ref, suggestOrListServers(srv, r.serverNames()))
	}
	return ref, fmt.Sprintf("no model has alias `%s`%s", ref, suggestOrList(ref, aliasList))
}

func fieldOr(p path, field, sentence string) path {
	if sentence != "" {
		return p
	}
	return p.child(field)
}

func suggestOrList(word string, known []string) string {
	if s := suggest(word, known); s != "" {
		return s
	}
	return "; models: " + strings.Join(known, ", ")
}

func resolveBaseline(c *collector, in *Baseline, name, dir string) *plan.Baseline {
	p := path{"baseline"}
	b := &plan.Baseline{
		Path:           filepath.Join("baselines", name+".json"),
		Metrics:        plan.DefaultGateMetrics(),
		MetricsDefault: true,
		Confidence:     plan.DefaultConfidence,
		Keep:           plan.DefaultKeep,
		MinRuns:        plan.DefaultMinRuns,
	}
	if in.Path != "" {
		b.Path = rel(dir, in.Path)
	}
	if len(in.Metrics) > 0 {
		b.Metrics, b.MetricsDefault = nil, false
		for i, m := range in.Metrics {
			cm, err := CanonicalMetric(m)
			if err != nil {
				c.at(p.child("metrics", i), "%v", err)
				continue
			}
			b.Metrics = append(b.Metrics, cm)
		}
	}
	keys := make([]string, 0, len(in.Tolerances))
	for k := range in.Tolerances {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cm, err := CanonicalMetric(k)
		if err != nil {
			c.atKey(p.child("tolerances", k), "%v", err)
			continue
		}
		v, err := ParsePercent(in.Tolerances[k], true)
		if err != nil {
			c.at(p.child("tolerances", k), "%v", err)
			continue
		}
		if b.Tolerances == nil {
			b.Tolerances = map[string]float64{}
		}
		if _, dup := b.Tolerances[cm]; dup {
			c.atKey(p.child("tolerances", k), "tolerance for %s is given twice (under two names)", cm)
		}
		b.Tolerances[cm] = v / 100
	}
	if in.Confidence != 0 {
		b.Confidence = in.Confidence
	}
	if in.Keep != 0 {
		b.Keep = in.Keep
	}
	if in.MinRuns != 0 {
		b.MinRuns = in.MinRuns
	}
	if in.Testbed != "" {
		if err := plan.CheckTestbedName(in.Testbed); err != nil {
			c.at(p.child("testbed"), "%v", err)
		}
		b.Testbed = in.Testbed
	}
	b.Required = in.Required
	if b.MinRuns > b.Keep {
		c.at(p.child("min_runs"), "min_runs (%d) cannot exceed keep (%d): the gate would never have enough history", b.MinRuns, b.Keep)
	}
	return b
}

package scenario

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
)

// Coordinate names, as used in plan.Point.Coords and check selectors.
const (
	CoordConcurrency  = "concurrency"
	CoordRequestRate  = "request_rate"
	CoordBatchSize    = "batch_size"
	CoordShapeSet     = "shape_set"
	CoordProtocol     = "protocol"
	CoordSharedMemory = "shared_memory"
	CoordInputTokens  = "input_tokens"  // kind openai, when swept
	CoordOutputTokens = "output_tokens" // kind openai, when swept
	CoordStage        = "stage"         // load.stages: the stage's number, from 1
	CoordSearch       = "search"        // a search's figure and its probes
)

func (a At) empty() bool {
	return len(a.Concurrency)+len(a.RequestRate)+len(a.BatchSize)+len(a.ShapeSet)+len(a.Protocol)+len(a.SharedMemory)+
		len(a.InputTokens)+len(a.OutputTokens)+len(a.Stage)+len(a.Search) == 0
}

func (a At) fields() []struct {
	name string
	vals StringList
} {
	return []struct {
		name string
		vals StringList
	}{
		{CoordConcurrency, a.Concurrency},
		{CoordRequestRate, a.RequestRate},
		{CoordBatchSize, a.BatchSize},
		{CoordShapeSet, a.ShapeSet},
		{CoordProtocol, a.Protocol},
		{CoordSharedMemory, a.SharedMemory},
		{CoordInputTokens, a.InputTokens},
		{CoordOutputTokens, a.OutputTokens},
		{CoordStage, a.Stage},
		{CoordSearch, a.Search},
	}
}

// coordValues lists, per coordinate, the canonical values points will have.
func (r *resolved) coordValues() map[string][]string {
	out := map[string][]string{}
	d := r.sweep
	switch r.load.Mode {
	case plan.LoadRequestRate:
		if d.rate != nil {
			for _, v := range d.rate {
				out[CoordRequestRate] = append(out[CoordRequestRate], formatNumber(v))
			}
		} else {
			out[CoordRequestRate] = []string{formatNumber(r.load.Rate)}
		}
	default:
		out[CoordConcurrency] = intStrings(d.concurrency, []int{r.load.Concurrency})
	}
	out[CoordBatchSize] = intStrings(d.batch, r.batch)
	for _, s := range d.shapeSets {
		out[CoordShapeSet] = append(out[CoordShapeSet], s.Name)
	}
	for _, proto := range r.protocols() {
		out[CoordProtocol] = append(out[CoordProtocol], string(proto))
	}
	out[CoordSharedMemory] = d.shm
	if len(d.shm) == 0 {
		out[CoordSharedMemory] = []string{r.shm}
	}
	if d.inTokens != nil {
		out[CoordInputTokens] = intStrings(d.inTokens, nil)
	}
	if d.outTokens != nil {
		out[CoordOutputTokens] = intStrings(d.outTokens, nil)
	}
	if len(r.mixes) > 0 {
		// A mix step's load coordinate is the swept value, when swept.
		delete(out, CoordConcurrency)
		delete(out, CoordRequestRate)
		if d.concurrency != nil {
			out[CoordConcurrency] = intStrings(d.concurrency, nil)
		}
		for _, v := range d.rate {
			out[CoordRequestRate] = append(out[CoordRequestRate], formatNumber(v))
		}
	}
	if len(r.stages) > 0 || r.searchOnly {
		delete(out, CoordConcurrency)
		delete(out, CoordRequestRate)
		for _, st := range r.stages {
			out[CoordStage] = append(out[CoordStage], strconv.Itoa(st.Index))
		}
	}
	for _, s := range r.searches {
		out[CoordSearch] = append(out[CoordSearch], s.name)
	}
	return out
}

func intStrings(vals, fallback []int) []string {
	if len(vals) == 0 {
		vals = fallback
	}
	seen := map[int]bool{}
	var out []string
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			out = append(out, strconv.Itoa(v))
		}
	}
	return out
}

// resolveAt canonicalizes a selector and checks that each value exists
// among the points: a selector that matches nothing would make its check
// vacuous, which a gate must never be.
func resolveAt(c *collector, p path, a At, coords map[string][]string) map[string][]string {
	if a.empty() {
		return nil
	}
	out := map[string][]string{}
	for _, f := range a.fields() {
		if len(f.vals) == 0 {
			continue
		}
		have, exists := coords[f.name]
		if !exists {
			c.atKey(p.child(f.name), "no point has a %s coordinate in this scenario", f.name)
			continue
		}
		for _, v := range f.vals {
			cv, ok := canonicalCoord(f.name, v)
			if !ok {
				c.at(p.child(f.name), "%q is not a valid %s", v, f.name)
				continue
			}
			if !contains(have, cv) {
				c.at(p.child(f.name), "%s %s selects no point (values: %s)", f.name, cv, strings.Join(have, ", "))
				continue
			}
			out[f.name] = append(out[f.name], cv)
		}
		sort.Strings(out[f.name])
	}
	return out
}

func canonicalCoord(name, v string) (string, bool) {
	switch name {
	case CoordConcurrency, CoordBatchSize, CoordInputTokens, CoordOutputTokens, CoordStage:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		return strconv.Itoa(n), err == nil && n > 0
	case CoordRequestRate:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return formatNumber(f), err == nil && f > 0 && !math.IsInf(f, 0)
	}
	return v, v != ""
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

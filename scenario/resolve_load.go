package scenario

import (
	"slices"

	"github.com/perfscen/perfscen/runner/plan"
)

func resolveLoad(s *Scenario, c *collector, r *resolved, dir string) {
	in := s.Load
	p := path{"load"}
	mode := plan.LoadMode(in.Mode)
	if mode == "" {
		mode = plan.LoadConcurrency
		if in.RequestRate > 0 || len(s.Sweep.RequestRate) > 0 || in.RequestIntervals != "" {
			mode = plan.LoadRequestRate
		}
	}
	l := plan.Load{
		Mode:             mode,
		Concurrency:      in.Concurrency,
		Async:            in.Async,
		Streaming:        in.Streaming,
		WarmupIterations: in.WarmupIterations,
		MaxThreads:       in.MaxThreads,
	}
	if in.Concurrency > 0 {
		checkConcurrency(c, p.child("concurrency"), in.Concurrency)
	}
	if in.MaxThreads > 0 {
		checkConcurrency(c, p.child("max_threads"), in.MaxThreads)
	}
	switch mode {
	case plan.LoadConcurrency, plan.LoadIterations:
		if l.Concurrency == 0 {
			l.Concurrency = 1
		}
		if in.RequestRate != 0 {
			c.atKey(p.child("request_rate"), "applies only with mode: request_rate (mode is %s)", mode)
		}
		if len(s.Sweep.RequestRate) > 0 {
			c.atKey(path{"sweep", "request_rate"}, "needs load.mode: request_rate (mode is %s)", mode)
		}
		if in.Distribution != "" && !rateSearch(s) {
			c.atKey(p.child("distribution"), "applies only with mode: request_rate (or a request_rate search)")
		}
		if in.RequestIntervals != "" {
			c.atKey(p.child("request_intervals"), "applies only with mode: request_rate (mode is %s)", mode)
		}
		r.searchDistribution = plan.Distribution(in.Distribution)
		if mode == plan.LoadIterations && in.Iterations == 0 {
			c.at(p, "mode iterations needs `iterations` (requests per point)")
		}
		if mode == plan.LoadConcurrency && in.Iterations != 0 {
			c.atKey(p.child("iterations"), "applies only with mode: iterations")
		}
		l.Iterations = in.Iterations
	case plan.LoadRequestRate:
		if in.Concurrency != 0 {
			c.atKey(p.child("concurrency"), "does not apply with mode: request_rate (the rate sets the load)")
		}
		if len(s.Sweep.Concurrency) > 0 {
			c.atKey(path{"sweep", "concurrency"}, "does not apply with load.mode: request_rate")
		}
		if in.RequestRate == 0 && len(s.Sweep.RequestRate) == 0 && len(s.Searches) == 0 && len(in.Stages) == 0 && in.RequestIntervals == "" && !hasTrace(s) {
			c.at(p, "mode request_rate needs `request_rate`, sweep.request_rate or request_intervals")
		}
		if in.Iterations != 0 {
			c.atKey(p.child("iterations"), "applies only with mode: iterations")
		}
		l.Rate = in.RequestRate
		l.Distribution = plan.Distribution(in.Distribution)
		if l.Distribution == "" {
			l.Distribution = plan.Constant
		}
		if in.RequestIntervals != "" {
			resolveIntervals(s, c, &l, dir)
		}
	}
	r.load = l
	r.shm = in.SharedMemory
	if r.shm == "" {
		r.shm = string(plan.ShmNone)
	}
	// 0 lets the kind size each output region (from the model's fixed
	// shapes or one reply); DefaultOutputShmSize is its last resort.
	r.outShm = 0
	if in.OutputSharedMemorySize != "" {
		n, err := ParseSize(in.OutputSharedMemorySize)
		if err != nil {
			c.at(p.child("output_shared_memory_size"), "%v", err)
		} else {
			r.outShm = n
		}
	}
}

// resolveIntervals reads load.request_intervals: the schedule replaces
// the request rate (the point's rate is its mean), so nothing else may set
// one.
func resolveIntervals(s *Scenario, c *collector, l *plan.Load, dir string) {
	p := path{"load", "request_intervals"}
	in := s.Load
	for _, x := range []struct {
		given bool
		at    path
	}{
		{in.RequestRate != 0, path{"load", "request_rate"}},
		{in.Distribution != "", path{"load", "distribution"}},
		{len(s.Sweep.RequestRate) > 0, path{"sweep", "request_rate"}},
		{len(in.Stages) > 0, path{"load", "stages"}},
		{len(s.Searches) > 0, path{"searches"}},
	} {
		if x.given {
			c.atKey(x.at, "does not apply with load.request_intervals: the intervals are the schedule")
		}
	}
	iv, err := ReadIntervals(rel(dir, in.RequestIntervals))
	if err != nil {
		c.at(p, "%v", err)
		return
	}
	l.Intervals, l.Rate, l.Distribution = iv, IntervalsRate(iv), plan.Intervals
}

// rateSearch says some search probes request rates.
func rateSearch(s *Scenario) bool {
	for _, sp := range s.Searches {
		if sp.RequestRate != "" {
			return true
		}
	}
	return false
}

// maxPointsPerModel bounds the cartesian product so a sweep typo fails at
// load instead of planning days of measurement.
const (
	maxPointsPerModel = 10000
	maxPoints         = 100000
)

func resolveSweep(s *Scenario, c *collector, r *resolved) {
	in := s.Sweep
	p := path{"sweep"}
	d := &r.sweep
	var err error
	if len(in.Concurrency) > 0 {
		if d.concurrency, err = parseInts(in.Concurrency); err != nil {
			c.at(p.child("concurrency"), "%v", err)
		} else if top := slices.Max(d.concurrency); !checkConcurrency(c, p.child("concurrency"), top) {
			d.concurrency = nil
		}
	}
	if len(in.RequestRate) > 0 {
		if d.rate, err = parseNumbers(in.RequestRate); err != nil {
			c.at(p.child("request_rate"), "%v", err)
		}
	}
	if len(in.BatchSize) > 0 {
		if d.batch, err = parseInts(in.BatchSize); err != nil {
			c.at(p.child("batch_size"), "%v", err)
		}
	}
	names := map[string]bool{}
	for i, ss := range in.Shapes {
		if names[ss.Name] {
			c.at(p.child("shapes", i, "name"), "shape set `%s` is defined twice", ss.Name)
		}
		names[ss.Name] = true
	}
	d.inTokens = tokenLengths(c, p.child("input_tokens"), in.InputTokens)
	d.outTokens = tokenLengths(c, p.child("output_tokens"), in.OutputTokens)
	d.shapeSets = in.Shapes
	for i, v := range distinct(c, p.child("protocol"), in.Protocol) {
		proto, err := plan.ParseProtocol(v)
		if err != nil {
			c.at(p.child("protocol", i), "%v", err)
			continue
		}
		d.protocol = append(d.protocol, proto)
	}
	d.shm = distinct(c, p.child("shared_memory"), in.SharedMemory)

	n := max(1, len(d.concurrency)) * max(1, len(d.rate)) * max(1, len(d.batch)) *
		max(1, len(d.shapeSets)) * max(1, len(d.protocol)) * max(1, len(d.shm)) *
		max(1, len(d.inTokens)) * max(1, len(d.outTokens))
	if n > maxPointsPerModel {
		c.at(p, "the sweep has %d points per model; at most %d are allowed", n, maxPointsPerModel)
	} else if total := n * len(s.Models); total > maxPoints {
		c.at(p, "the plan has %d points (%d per model); at most %d are allowed", total, n, maxPoints)
	}
	conflicts := []struct {
		given bool
		at    path
		swept bool
		what  string
	}{
		{s.Load.Concurrency != 0, path{"load", "concurrency"}, len(d.concurrency) > 0, "sweep.concurrency"},
		{s.Load.RequestRate != 0, path{"load", "request_rate"}, len(d.rate) > 0, "sweep.request_rate"},
		{s.Load.SharedMemory != "", path{"load", "shared_memory"}, len(d.shm) > 0, "sweep.shared_memory"},
	}
	for i, m := range s.Models {
		conflicts = append(conflicts, struct {
			given bool
			at    path
			swept bool
			what  string
		}{m.BatchSize != 0, path{"models", i, "batch_size"}, len(d.batch) > 0, "sweep.batch_size"})
	}
	for _, x := range conflicts {
		if x.given && x.swept {
			c.atKey(x.at, "is set by %s as well; give it in one place", x.what)
		}
	}
	if s.Load.Streaming {
		for _, proto := range r.protocols() {
			if proto != plan.ProtocolGRPC {
				c.at(path{"load", "streaming"}, "streaming needs protocol grpc, but points use %s", proto)
				break
			}
		}
	}
}

func distinct(c *collector, p path, l StringList) []string {
	seen := map[string]bool{}
	for _, v := range l {
		if seen[v] {
			c.at(p, "%s is listed twice", v)
		}
		seen[v] = true
	}
	return l
}

// protocols lists the protocols points will use.
func (r *resolved) protocols() []plan.Protocol {
	if len(r.sweep.protocol) > 0 {
		return r.sweep.protocol
	}
	return []plan.Protocol{r.server.Protocol}
}

// tokenLengths parses a token-length sweep; nil when not swept.
func tokenLengths(c *collector, p path, l StringList) []int {
	if len(l) == 0 {
		return nil
	}
	v, err := parseInts(l)
	if err != nil {
		c.at(p, "%v", err)
		return nil
	}
	for _, n := range v {
		if n > maxTokenLength {
			c.at(p, "%d tokens: at most %d", n, maxTokenLength)
			return nil
		}
	}
	return v
}

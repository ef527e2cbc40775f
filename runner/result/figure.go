package result

import (
	"fmt"
	"strings"

	"github.com/perfscen/perfscen/internal/stats"
	"github.com/perfscen/perfscen/runner/plan"
)

// How a point's figure is taken from its kept trials (Figure.Stat).
const (
	// StatMedian: the median of the per-trial values, trials without data
	// for the metric left out. Throughput, latencies and every other time
	// or rate: the figure the baseline gate tests, and one disturbed
	// window cannot move it.
	StatMedian = "median"
	// StatPooled: all kept trials taken together: failed requests and the
	// error rate are totals over the kept trials (a median would hide
	// errors confined to a minority of windows), maxima the largest value
	// seen in any of them.
	StatPooled = "pooled"
	// StatReported: a point without trials (imported from perf_analyzer):
	// the figure the file reported.
	StatReported = "reported"
)

// Figure is the one number a report or a check shows for a metric at a
// point, with how it was taken.
type Figure struct {
	Value float64
	// Stat is StatMedian, StatPooled or StatReported.
	Stat string
	// Trials is how many kept trials it was taken over (0 when reported).
	Trials int
}

// Label says how the figure was taken, for reports: "median of 5 kept
// trials", "all 5 kept trials", "as reported".
func (f Figure) Label() string {
	switch f.Stat {
	case StatMedian:
		return fmt.Sprintf("median of %d kept trial%s", f.Trials, plural(f.Trials))
	case StatPooled:
		return fmt.Sprintf("all %d kept trial%s", f.Trials, plural(f.Trials))
	}
	return "as reported"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// StatOf says how the figure of metric is taken at a point with trials.
func StatOf(metric string) string {
	switch {
	case metric == plan.MetricErrors, metric == plan.MetricErrorRate, metric == plan.MetricOutputTokensAvg,
		metric == plan.MetricLatencyMax, strings.HasSuffix(metric, "_max"):
		return StatPooled
	case pooledLLM(metric):
		// The engine's figures and the schedule error are those of every
		// kept window together (hits over queries, every send).
		return StatPooled
	}
	return StatMedian
}

func pooledLLM(metric string) bool {
	for _, p := range []string{"schedule_error_", "prefix_cache_", "kv_cache_", "requests_running_", "requests_waiting_"} {
		if strings.HasPrefix(metric, p) {
			return true
		}
	}
	return false
}

// Figure is the figure of metric at p: every renderer and every check
// takes a point's number from here, so one figure is one number wherever
// it is printed. ok is false when the metric is unknown or has no data.
func (p *Point) Figure(metric string) (Figure, bool) {
	figs := p.FigureMetrics()
	v, ok := figs.Value(metric)
	if !ok {
		return Figure{}, false
	}
	f := Figure{Value: v, Stat: StatReported}
	if len(p.Trials) > 0 {
		f.Stat, f.Trials = StatOf(metric), len(p.Trials)
	}
	return f, true
}

// FigureMetrics are the point's figures as one Metrics: Summary (perf_analyzer's
// merge of the kept trials: counts summed, latencies pooled) with every
// median figure (see StatOf) replaced by the median over the kept trials.
// Counts, error rates and maxima stay pooled; a point without trials
// keeps the figures it reported.
//
// The latency standard deviation and minimum have no metric name, but the
// point block prints the one beside the average: it is the median of the
// trials' own standard deviations (the spread of one window's requests,
// like the average it stands beside), not the pooled one, which adds the
// drift between windows; the minimum is the least over the kept trials.
func (p *Point) FigureMetrics() Metrics {
	out := p.Summary
	if len(p.Trials) == 0 {
		return out
	}
	for _, f := range medianFields {
		if v, ok := p.trialMedian(f.has); ok {
			*f.field(&out) = v
		}
	}
	if v, ok := p.trialMin(lat(func(m *Metrics) float64 { return m.LatencyMinUs })); ok {
		out.LatencyMinUs = v
	}
	if out.Server != nil && !out.Server.Reset {
		s := *out.Server
		for _, f := range serverFields {
			if v, ok := p.trialMedian(func(m *Metrics) (float64, bool) {
				if m.Server == nil || m.Server.Reset {
					return 0, false
				}
				return *f(m.Server), true
			}); ok {
				*f(&s) = v
			}
		}
		out.Server = &s
	}
	if out.Process != nil {
		ps := *out.Process
		for _, f := range processFields {
			if v, ok := p.trialMedian(func(m *Metrics) (float64, bool) {
				if m.Process == nil || m.Process.Inferences <= 0 || f.get(m.Process) == nil {
					return 0, false
				}
				return *f.get(m.Process), true
			}); ok {
				f.set(&ps, v)
			}
		}
		out.Process = &ps
	}
	if out.LLM != nil {
		l := *out.LLM
		for _, f := range llmFields {
			if v, ok := p.trialMedian(func(m *Metrics) (float64, bool) {
				if m.LLM == nil {
					return 0, false
				}
				return f.get(m.LLM)
			}); ok {
				*f.at(&l) = v
			}
		}
		if l.Goodput != nil {
			if v, ok := p.trialMedian(getters[plan.MetricGoodput]); ok {
				l.Goodput = &v
			}
		}
		out.LLM = &l
	}
	return out
}

// trialMedian is the median of has over the trials that have a value.
func (p *Point) trialMedian(has func(m *Metrics) (float64, bool)) (float64, bool) {
	vs := make([]float64, 0, len(p.Trials))
	for i := range p.Trials {
		if v, ok := has(&p.Trials[i].Metrics); ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	return stats.Median(vs), true
}

// trialMin is the least value of has over the trials that have one.
func (p *Point) trialMin(has func(m *Metrics) (float64, bool)) (float64, bool) {
	least, found := 0.0, false
	for i := range p.Trials {
		if v, ok := has(&p.Trials[i].Metrics); ok && (!found || v < least) {
			least, found = v, true
		}
	}
	return least, found
}

type medianField struct {
	// has is the metric's getter, so "a trial with data" means what it
	// means to the checks.
	has   func(m *Metrics) (float64, bool)
	field func(m *Metrics) *float64
}

func metricField(name string, field func(m *Metrics) *float64) medianField {
	return medianField{has: getters[name], field: field}
}

var medianFields = []medianField{
	metricField(plan.MetricThroughput, func(m *Metrics) *float64 { return &m.Throughput }),
	metricField(plan.MetricLatencyAvg, func(m *Metrics) *float64 { return &m.LatencyAvgUs }),
	{has: lat(func(m *Metrics) float64 { return m.LatencyStdUs }), field: func(m *Metrics) *float64 { return &m.LatencyStdUs }},
	metricField(plan.MetricP50, func(m *Metrics) *float64 { return &m.P50Us }),
	metricField(plan.MetricP90, func(m *Metrics) *float64 { return &m.P90Us }),
	metricField(plan.MetricP95, func(m *Metrics) *float64 { return &m.P95Us }),
	metricField(plan.MetricP99, func(m *Metrics) *float64 { return &m.P99Us }),
	metricField(plan.MetricClientSendRecv, func(m *Metrics) *float64 { return &m.ClientSendRecvUs }),
	metricField(plan.MetricClientWait, func(m *Metrics) *float64 { return &m.ClientWaitUs }),
	{has: decoupled(func(m *Metrics) float64 { return m.ResponseThroughput }), field: func(m *Metrics) *float64 { return &m.ResponseThroughput }},
	{has: decoupled(func(m *Metrics) float64 { return m.FirstResponseAvgUs }), field: func(m *Metrics) *float64 { return &m.FirstResponseAvgUs }},
}

// decoupled figures exist only where responses were counted.
func decoupled(f func(m *Metrics) float64) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) { return f(m), m.Responses > 0 }
}

var serverFields = []func(s *ServerStats) *float64{
	func(s *ServerStats) *float64 { return &s.AvgRequestUs },
	func(s *ServerStats) *float64 { return &s.QueueUs },
	func(s *ServerStats) *float64 { return &s.ComputeInputUs },
	func(s *ServerStats) *float64 { return &s.ComputeInferUs },
	func(s *ServerStats) *float64 { return &s.ComputeOutputUs },
}

// processFields are the median figures of ProcessStats. set stores a
// new value rather than writing through the pointer: the figures' copy
// shares its pointers with Summary.
var processFields = []struct {
	get func(p *ProcessStats) *float64
	set func(p *ProcessStats, v float64)
}{
	{func(p *ProcessStats) *float64 { return &p.CPUUs }, func(p *ProcessStats, v float64) { p.CPUUs = v }},
	{func(p *ProcessStats) *float64 { return p.RunQueueUs }, func(p *ProcessStats, v float64) { p.RunQueueUs = &v }},
	{func(p *ProcessStats) *float64 { return p.PreemptUs }, func(p *ProcessStats, v float64) { p.PreemptUs = &v }},
	{func(p *ProcessStats) *float64 { return p.Instructions }, func(p *ProcessStats, v float64) { p.Instructions = &v }},
	{func(p *ProcessStats) *float64 { return p.Work }, func(p *ProcessStats, v float64) { p.Work = &v }},
}

// llmFieldFunc is one LLM median figure: its value in a trial (ok false
// without data) and where it lives.
type llmFieldFunc struct {
	get func(l *LLMMetrics) (float64, bool)
	at  func(l *LLMMetrics) *float64
}

var llmFields = func() []llmFieldFunc {
	var out []llmFieldFunc
	dists := []func(l *LLMMetrics) *Distribution{
		func(l *LLMMetrics) *Distribution { return &l.TTFT },
		func(l *LLMMetrics) *Distribution { return &l.ITL },
		func(l *LLMMetrics) *Distribution { return &l.TPOT },
	}
	fields := []func(d *Distribution) *float64{
		func(d *Distribution) *float64 { return &d.AvgUs },
		func(d *Distribution) *float64 { return &d.P50Us },
		func(d *Distribution) *float64 { return &d.P90Us },
		func(d *Distribution) *float64 { return &d.P95Us },
		func(d *Distribution) *float64 { return &d.P99Us },
	}
	for _, d := range dists {
		for _, f := range fields {
			out = append(out, llmFieldFunc{
				get: func(l *LLMMetrics) (float64, bool) { dd := d(l); return *f(dd), dd.Has() },
				at:  func(l *LLMMetrics) *float64 { return f(d(l)) },
			})
		}
	}
	out = append(out, llmFieldFunc{
		get: func(l *LLMMetrics) (float64, bool) { return l.OutputTokensPerSec, true },
		at:  func(l *LLMMetrics) *float64 { return &l.OutputTokensPerSec },
	})
	return out
}()

package baseline

import (
	"math"
	"slices"
	"sort"

	"github.com/perfscen/perfscen/internal/stats"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Estimate is the noise of one point × metric over a testbed's history.
type Estimate struct {
	Runs   int     `json:"runs"`   // history runs with data
	Trials int     `json:"trials"` // median number of trials per run
	Center float64 `json:"center"` // geometric mean of the run medians
	// TrialCV is the mean within-run coefficient of variation of trials.
	TrialCV float64 `json:"trial_cv"`
	// JobSD is the standard deviation of the run log-medians: job-to-job
	// noise (with the within-run error of each median folded in).
	JobSD float64 `json:"job_sd"`
	// WithinSE is the root-mean-square within-run standard error of a run's
	// log-median.
	WithinSE float64 `json:"within_se"`
	// MDE is the smallest relative change the history gate detects with
	// 80% probability at 0.99 confidence; 0 when fewer than 2 runs.
	MDE float64 `json:"mde,omitempty"`
}

// Noise holds estimates by point ID, then metric.
type Noise map[string]map[string]Estimate

// Series is the history of one point × metric, one entry per run that had
// positive data, most recent first.
type Series struct {
	Medians []float64
	SDLog   []float64 // within-run SD of log trial values (0 when n < 2)
	Trials  []int
	CVs     []float64
}

// Series collects the history of metric at point. Runs whose values are
// not all positive are left out: the gate works on the log scale.
func (tb *Testbed) Series(point, metric string) Series {
	var s Series
	for _, r := range tb.Runs {
		p := r.Points[point]
		if p == nil {
			continue
		}
		s.add(p.Values(metric))
	}
	return s
}

func (s *Series) add(vs []float64) {
	if !stats.Positive(vs) {
		return
	}
	s.Medians = append(s.Medians, stats.Median(vs))
	s.Trials = append(s.Trials, len(vs))
	if len(vs) >= 2 {
		s.SDLog = append(s.SDLog, stats.LogSD(vs))
		s.CVs = append(s.CVs, stats.CV(vs))
	} else {
		s.SDLog = append(s.SDLog, 0)
		s.CVs = append(s.CVs, 0)
	}
}

// K is the number of history runs.
func (s Series) K() int { return len(s.Medians) }

// LogMedians returns log of each run median.
func (s Series) LogMedians() []float64 {
	out := make([]float64, len(s.Medians))
	for i, m := range s.Medians {
		out[i] = math.Log(m)
	}
	return out
}

// PooledSDLog is the root-mean-square within-run log SD over runs that had
// at least two trials; it stands in for runs (and new runs) with one value.
func (s Series) PooledSDLog() float64 {
	var ss float64
	n := 0
	for i, sd := range s.SDLog {
		if s.Trials[i] >= 2 {
			ss += sd * sd
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(ss / float64(n))
}

// WithinSE is the root-mean-square standard error of the history's run
// log-medians from trial noise alone.
func (s Series) WithinSE() float64 {
	pooled := s.PooledSDLog()
	var ss float64
	for i, sd := range s.SDLog {
		if s.Trials[i] < 2 {
			sd = pooled
		}
		se := stats.LogMedianSE(sd, s.Trials[i])
		ss += se * se
	}
	if len(s.SDLog) == 0 {
		return 0
	}
	return math.Sqrt(ss / float64(len(s.SDLog)))
}

// TrialCV is the mean within-run coefficient of variation.
func (s Series) TrialCV() float64 {
	var sum float64
	n := 0
	for i, cv := range s.CVs {
		if s.Trials[i] >= 2 {
			sum += cv
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Estimate summarizes the series.
func (s Series) Estimate() Estimate {
	k := s.K()
	if k == 0 {
		return Estimate{}
	}
	lm := s.LogMedians()
	mean, sd := stats.MeanSD(lm)
	trials := append([]int(nil), s.Trials...)
	sort.Ints(trials)
	e := Estimate{
		Runs:     k,
		Trials:   trials[len(trials)/2],
		Center:   math.Exp(mean),
		TrialCV:  s.TrialCV(),
		JobSD:    sd,
		WithinSE: s.WithinSE(),
	}
	if k >= 2 {
		e.MDE = stats.MDE(sd*math.Sqrt(1+1/float64(k)), k, plan.DefaultConfidence, stats.DefaultPower)
	}
	return e
}

// ShowMetrics are the metrics a baseline listing shows unless asked for
// others: the ones a Diff reports, then an LLM point's headline figures
// (time to first token, time per output token, token rate, goodput).
var ShowMetrics = append(slices.Clone(DiffMetrics),
	plan.MetricTTFTP50, plan.MetricTPOTP50, plan.MetricOutputTokensPS, plan.MetricGoodput)

// Metrics lists, in the order of want, the metrics of want with an
// estimate at point id; with want empty, every metric with one, by name.
func (n Noise) Metrics(id string, want []string) []string {
	est := n[id]
	if len(want) == 0 {
		out := make([]string, 0, len(est))
		for m := range est {
			out = append(out, m)
		}
		slices.Sort(out)
		return out
	}
	var out []string
	for _, m := range want {
		if _, ok := est[m]; ok {
			out = append(out, m)
		}
	}
	return out
}

// Recompute refreshes the testbed's noise estimates from its history.
func (tb *Testbed) Recompute() {
	tb.Noise = Noise{}
	for _, id := range tb.PointIDs() {
		metrics := map[string]bool{}
		for _, r := range tb.Runs {
			if p := r.Points[id]; p != nil {
				for m := range p.Summary {
					metrics[m] = true
				}
			}
		}
		est := map[string]Estimate{}
		for m := range metrics {
			if e := tb.Series(id, m).Estimate(); e.Runs > 0 {
				est[m] = e
			}
		}
		if len(est) > 0 {
			tb.Noise[id] = est
		}
	}
}

// Calibrate estimates noise from independent runs of one scenario on one
// testbed (e.g. K fresh invocations made by "baseline calibrate").
func Calibrate(runs []*result.Run) Noise {
	tb := &Testbed{}
	for _, r := range runs {
		tb.Runs = append(tb.Runs, Summarize(r))
	}
	tb.Recompute()
	return tb.Noise
}

package plan

import (
	"strconv"
	"time"
)

// Search metric names: the value a search finds is a figure of its own,
// gated, baselined and compared like any other.
const (
	MetricMaxConcurrency = "max_concurrency"
	MetricMaxRequestRate = "max_request_rate"
)

// Search methods.
const (
	SearchBinary = "binary" // bisect the range: start, end, then midpoints
	SearchLinear = "linear" // step up from the start until a load fails
)

// How a probe is judged against the condition.
const (
	// DecideInterval: a probe meets the condition only when the confidence
	// interval of its figure lies wholly on the right side of the bound;
	// one that straddles it gets more trials, and counts as failing when
	// they are spent.
	DecideInterval = "interval"
	// DecideMerged: perf_analyzer's rule, the kept windows merged into one
	// figure and compared with the bound as it is.
	DecideMerged = "merged"
)

// Search finds, for one model, the highest load level of one dimension
// at which a condition holds: max concurrency with p99 under 50 ms, or max
// request rate with 95% of the requests meeting their SLOs. Its probes are
// points built from Template as the search goes; they are measured as any
// point, and the value found is a point of its own in the result (Name,
// metric Metric).
type Search struct {
	// Name is the figure's name, e.g. "max_concurrency@p99<50ms"; the
	// result point of the search is Model/Name.
	Name  string `json:"name"`
	Model string `json:"model"`
	// Metric is MetricMaxConcurrency or MetricMaxRequestRate.
	Metric string `json:"metric"`
	// Start, End and Step are the range searched, inclusive; End 0 (linear
	// only) steps up until a load fails. For concurrency they are whole.
	Start  float64 `json:"start"`
	End    float64 `json:"end"`
	Step   float64 `json:"step"`
	Method string  `json:"method"`
	// Condition is the bound a load must meet ("p99 < 50ms",
	// "goodput_share >= 0.95").
	Condition Threshold `json:"condition"`
	// SLO is the per-request latency bound (µs) goodput_share counts
	// against, for models that are not LLMs (LLM goodput uses plan.LLM).
	SLOLatencyUs float64 `json:"slo_latency_us,omitempty"`
	Decide       string  `json:"decide"`
	// Confidence is the interval's level (DecideInterval).
	Confidence float64 `json:"confidence"`
	// MaxExtraTrials bounds the trials added to one probe whose interval
	// straddles the bound.
	MaxExtraTrials int `json:"max_extra_trials"`
	// Template is the probe point at Start; probes differ in their load
	// level, ID and coordinates only.
	Template Point `json:"template"`
}

// Probe is the search's point at load level v.
func (s *Search) Probe(v float64) Point {
	pt := s.Template
	pt.Coords = map[string]string{}
	for k, c := range s.Template.Coords {
		pt.Coords[k] = c
	}
	pt.Search = s.Name
	lv := FormatLevel(v)
	if s.Metric == MetricMaxConcurrency {
		pt.Load.Concurrency = int(v)
		pt.Coords["concurrency"] = lv
		pt.ID = s.Model + "/" + s.Name + "/c=" + lv
	} else {
		pt.Load.Rate = v
		pt.Coords["request_rate"] = lv
		pt.ID = s.Model + "/" + s.Name + "/r=" + lv
	}
	pt.Coords["search"] = s.Name
	return pt
}

// PointID is the ID of the result point that holds the value found.
func (s *Search) PointID() string { return s.Model + "/" + s.Name }

// FormatLevel writes a load level as scenario coordinates do: integers
// without a decimal point, others as short as they round-trip.
func FormatLevel(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Stage is one step of a ramp (load.stages): the load goes from From to
// To over Duration, one level per measurement window, and every window is
// kept; the stage's figures are those windows'.
type Stage struct {
	Index    int           `json:"index"` // 1-based
	Duration time.Duration `json:"duration_ns"`
	From     float64       `json:"from"`
	To       float64       `json:"to"`
}

// Level is the load of window i of n: the ramp's value at the window's
// end, so the last window runs at the target (k6's ramps reach their
// target at the end of the stage). Concurrency levels round up and are at
// least 1.
func (s *Stage) Level(i, n int, concurrency bool) float64 {
	v := s.To
	if n > 0 {
		v = s.From + (s.To-s.From)*float64(i+1)/float64(n)
	}
	if concurrency {
		c := float64(int(v))
		if c < v {
			c++
		}
		return max(c, 1)
	}
	return v
}

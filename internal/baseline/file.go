package baseline

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/perfscen/perfscen/internal/stats"

	"sort"
	"time"

	"github.com/perfscen/perfscen/runner/result"
)

// FormatVersion is the version of the baseline document. Readers refuse
// documents with a newer version.
//
// Version 2: testbeds are named or derived without the hostname, and runs
// carry how disturbed the machine was. Version 1 files are read as they
// are; their hostname-hashed testbeds are found by Lookup on matching
// hardware and re-keyed at the next update.
//
// Version 3: server_work_infer is in units of the probe's matrix-vector
// kernel (internal/wakeprobe). Earlier versions' values of it, in units
// of a smaller kernel, are dropped on reading: a ratio across the two
// would say nothing of the server. Their other figures are kept.
const FormatVersion = 3

// File is one scenario's baseline, for any number of testbeds.
type File struct {
	FormatVersion int    `json:"format_version"`
	Scenario      string `json:"scenario"`
	// ScenarioHash is the hash of the scenario file at the latest update;
	// a differing hash at gate time means the scenario was edited since.
	ScenarioHash string              `json:"scenario_hash,omitempty"`
	Testbeds     map[string]*Testbed `json:"testbeds"`
}

// Testbed is the history recorded on one machine/server combination.
type Testbed struct {
	ID          string             `json:"id"`
	Environment result.Environment `json:"environment"`
	Updated     time.Time          `json:"updated"`
	// Runs are the history, the latest started first.
	Runs  []Run `json:"runs"`
	Noise Noise `json:"noise,omitempty"`
}

// Run is the summary of one recorded run.
type Run struct {
	// RunID is the recorded run's id (absent for runs recorded before ids
	// existed, and for imported perf_analyzer files).
	RunID           string            `json:"run_id,omitempty"`
	Recorded        time.Time         `json:"recorded"`
	Started         time.Time         `json:"started"`
	ScenarioHash    string            `json:"scenario_hash,omitempty"`
	Source          string            `json:"source"`
	PerfscenVersion string            `json:"perfscen_version,omitempty"`
	Points          map[string]*Point `json:"points"`
}

// When is the time a run is placed at in its history: when it started,
// else (a run without a start time) when it was recorded.
func (r *Run) When() time.Time {
	if r.Started.IsZero() {
		return r.Recorded
	}
	return r.Started
}

// Point is one sweep point of a recorded run.
type Point struct {
	Model  string            `json:"model"`
	Coords map[string]string `json:"coords,omitempty"`
	Status string            `json:"status"`
	// Summary holds every metric the point's summary had data for.
	Summary map[string]float64 `json:"summary"`
	Trials  []Trial            `json:"trials,omitempty"`
	Errors  int64              `json:"errors"`
}

// Trial is one kept measurement window.
type Trial struct {
	Values    map[string]float64 `json:"values"`
	Histogram string             `json:"histogram,omitempty"` // HDR V2 compressed, base64, microseconds
	// Disturbance is how busy the machine was with other work during
	// the trial (absent in histories recorded before it was measured).
	Disturbance *result.Disturbance `json:"disturbance,omitempty"`
}

// Contention is how disturbed a point's trials were: the medians over its
// trials of each disturbance signal, each with whether any trial recorded
// it (histories and machines differ in what they could measure).
type Contention struct {
	// OtherCPU is the share of all CPUs other processes used.
	OtherCPU     float64
	HaveOtherCPU bool
	// Wait is perfscen's own run-queue wait per unit of run time.
	Wait     float64
	HaveWait bool
	// Pressure is the machine's CPU pressure ("some" share of wall time).
	Pressure     float64
	HavePressure bool
	// Wake is the wake-up delay distribution (µs): the mean and each of
	// result.WakeupQuantiles, medians over the trials.
	Wake     result.WakeupDelay
	HaveWake bool
}

// Contention summarizes the point's trials.
func (p *Point) Contention() Contention {
	return contention(len(p.Trials), func(i int) *result.Disturbance { return p.Trials[i].Disturbance })
}

// PointContention is Contention for a point of a run.
func PointContention(p *result.Point) Contention {
	return contention(len(p.Trials), func(i int) *result.Disturbance { return p.Trials[i].Disturbance })
}

func contention(n int, at func(int) *result.Disturbance) Contention {
	var other, wait, press, wmean []float64
	wq := make([][]float64, len(result.WakeupQuantiles))
	for i := 0; i < n; i++ {
		d := at(i)
		if d == nil {
			continue
		}
		if w := d.WakeupDelay; w != nil && len(w.Quantiles) == len(wq) {
			wmean = append(wmean, w.Mean)
			for j, v := range w.Quantiles {
				wq[j] = append(wq[j], v)
			}
		}
		other = append(other, d.OtherCPU)
		if d.RunQueueWait != nil {
			wait = append(wait, *d.RunQueueWait)
		}
		if d.CPUPressure != nil {
			press = append(press, *d.CPUPressure)
		}
	}
	var c Contention
	if len(other) > 0 {
		c.OtherCPU, c.HaveOtherCPU = stats.Median(other), true
	}
	if len(wait) > 0 {
		c.Wait, c.HaveWait = stats.Median(wait), true
	}
	if len(press) > 0 {
		c.Pressure, c.HavePressure = stats.Median(press), true
	}
	if len(wmean) > 0 {
		c.HaveWake = true
		c.Wake.Mean = stats.Median(wmean)
		for _, vs := range wq {
			c.Wake.Quantiles = append(c.Wake.Quantiles, stats.Median(vs))
		}
	}
	return c
}

// MaxContention is, signal by signal, the most disturbed any history run
// of point was (each run summarized by its trials' median), and the number
// of history runs holding the point. A signal counts as recorded only if
// every such run recorded it: an unknown run could have been the busiest.
func (tb *Testbed) MaxContention(point string) (Contention, int) {
	most, n := Contention{HaveOtherCPU: true, HaveWait: true, HavePressure: true, HaveWake: true}, 0
	most.Wake.Quantiles = make([]float64, len(result.WakeupQuantiles))
	for _, r := range tb.Runs {
		p := r.Points[point]
		if p == nil {
			continue
		}
		c := p.Contention()
		n++
		most.OtherCPU, most.HaveOtherCPU = max(most.OtherCPU, c.OtherCPU), most.HaveOtherCPU && c.HaveOtherCPU
		most.Wait, most.HaveWait = max(most.Wait, c.Wait), most.HaveWait && c.HaveWait
		most.Pressure, most.HavePressure = max(most.Pressure, c.Pressure), most.HavePressure && c.HavePressure
		most.HaveWake = most.HaveWake && c.HaveWake
		if c.HaveWake {
			most.Wake.Mean = max(most.Wake.Mean, c.Wake.Mean)
			for j, v := range c.Wake.Quantiles {
				most.Wake.Quantiles[j] = max(most.Wake.Quantiles[j], v)
			}
		}
	}
	if n == 0 {
		return Contention{}, 0
	}
	if !most.HaveWake {
		most.Wake = result.WakeupDelay{}
	}
	return most, n
}

// New returns an empty baseline for a scenario.
func New(scenario string) *File {
	return &File{FormatVersion: FormatVersion, Scenario: scenario, Testbeds: map[string]*Testbed{}}
}

// TestbedID is the key a run is filed under; runs that carry no testbed
// id (some imports) share "unknown".
//
// A run made with --set overrides is filed under its testbed plus a digest
// of the overrides ("ci-1+set.3f2a9c1e"): settings changed on the command
// line make another series, which the gate never compares with the
// file's own (it says the series has no history instead).
func TestbedID(run *result.Run) string {
	id := run.Environment.Testbed
	if id == "" {
		id = "unknown"
	}
	if len(run.Overrides) == 0 {
		return id
	}
	sum := sha256.Sum256([]byte(strings.Join(run.Overrides, "\n")))
	return id + "+set." + hex.EncodeToString(sum[:4])
}

// TestbedIDs lists the file's testbeds, sorted.
func (f *File) TestbedIDs() []string {
	ids := make([]string, 0, len(f.Testbeds))
	for id := range f.Testbeds {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// PointIDs lists every point any history run holds, sorted.
func (tb *Testbed) PointIDs() []string {
	seen := map[string]bool{}
	for _, r := range tb.Runs {
		for id := range r.Points {
			seen[id] = true
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Values returns the per-trial values of metric at p, or the summary value
// alone when the point has no trials (imported data).
func (p *Point) Values(metric string) []float64 {
	var out []float64
	for _, t := range p.Trials {
		if v, ok := t.Values[metric]; ok {
			out = append(out, v)
		}
	}
	if len(p.Trials) == 0 {
		if v, ok := p.Summary[metric]; ok {
			out = append(out, v)
		}
	}
	return out
}

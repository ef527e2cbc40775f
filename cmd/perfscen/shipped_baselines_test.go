package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
	"github.com/perfscen/perfscen/schemas"
)

// A shipped baseline was recorded from the scenario file as it is now: an
// edit to the file (a description included) makes every run of it warn
// that the scenario changed since the baseline, starting with the
// README's first command. Re-record it (make baselines), or, when the edit
// cannot change what is measured, carry the new hash over.
func TestShippedBaselinesMatchTheirScenarios(t *testing.T) {
	root, files := shippedBaselines(t)
	for _, b := range files {
		name := strings.TrimSuffix(filepath.Base(b), ".json")
		body, err := os.ReadFile(filepath.Join(root, "scenarios", name+".yaml"))
		if err != nil {
			continue // a baseline of a scenario kept elsewhere
		}
		sum := sha256.Sum256(body)
		raw, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			ScenarioHash string `json:"scenario_hash"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if f.ScenarioHash != hex.EncodeToString(sum[:]) {
			t.Errorf("%s was recorded from another scenarios/%s.yaml (hash %.12s, the file's %.12s)", b, name, f.ScenarioHash, hex.EncodeToString(sum[:]))
		}
	}
}

// Every baseline check of a shipped scenario that needs no external
// server gates: replayed against its own history with the trials of its
// latest recorded run, no check is "not gated" (its detectable change
// above the tolerance it exists for) or uncalibrated. A history recorded
// on a busier machine than the one it must guard, or too short, fails
// here before a user reads "PASS — 4 checks not gated" from the README's
// first command. Re-record with make baselines.
func TestShippedBaselinesGate(t *testing.T) {
	root, files := shippedBaselines(t)
	for _, b := range files {
		name := strings.TrimSuffix(filepath.Base(b), ".json")
		scen := filepath.Join(root, "scenarios", name+".yaml")
		if _, err := os.Stat(scen); err != nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			p, err := scenario.LoadPlan(scen, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			if !inProcess(p) {
				t.Skip("needs an external server")
			}
			f, err := baseline.Load(b)
			if err != nil {
				t.Fatal(err)
			}
			for id, tb := range f.Testbeds {
				run := replay(t, id, tb.Runs[0])
				checks := verdict.Options{}.Baseline(p.Checks.Baseline, f, run)
				n := 0
				for _, c := range checks {
					if c.Key == verdict.KeyTestbed {
						continue
					}
					n++
					if c.Status == verdict.StatusNotGated || c.Uncalibrated {
						t.Errorf("testbed %s: %s @ %s: %s", id, c.Name, c.Point, c.Message)
					}
				}
				if n == 0 {
					t.Errorf("testbed %s: no baseline check at all", id)
				}
			}
		})
	}
}

// inProcess says whether every server of p starts inside perfscen.
func inProcess(p *plan.Plan) bool {
	for _, s := range p.Servers {
		if k, _ := schemas.KindNamed(s.Kind); !s.Embedded && !k.InProcess {
			return false
		}
	}
	return len(p.Servers) > 0
}

// replay turns a history run back into a result run on testbed id, with
// the figures the shipped scenarios gate.
func replay(t *testing.T, id string, r baseline.Run) *result.Run {
	t.Helper()
	run := &result.Run{SchemaVersion: result.SchemaVersion, Source: "perfscen", Status: result.StatusComplete,
		Environment: result.Environment{Testbed: id}}
	for pid, bp := range r.Points {
		p := result.Point{ID: pid, Model: bp.Model, ModelName: bp.Model, Coords: bp.Coords, Status: result.PointStable}
		for i, tr := range bp.Trials {
			m := result.Metrics{Requests: 1000}
			for k, v := range tr.Values {
				switch k {
				case plan.MetricThroughput:
					m.Throughput = v
				case plan.MetricLatencyAvg:
					m.LatencyAvgUs = v
				case plan.MetricP50:
					m.P50Us = v
				case plan.MetricP90:
					m.P90Us = v
				case plan.MetricP95:
					m.P95Us = v
				case plan.MetricP99:
					m.P99Us = v
				case plan.MetricServerInfer:
					if m.Server == nil {
						m.Server = &result.ServerStats{RequestCount: 1000}
					}
					m.Server.ComputeInferUs = v
				case plan.MetricServerQueue:
					if m.Server == nil {
						m.Server = &result.ServerStats{RequestCount: 1000}
					}
					m.Server.QueueUs = v
				case plan.MetricTPOTP50:
					if m.LLM == nil {
						m.LLM = &result.LLMMetrics{Streamed: 100}
					}
					m.LLM.TPOT.Count, m.LLM.TPOT.P50Us = 100, v
				case plan.MetricTTFTP50:
					if m.LLM == nil {
						m.LLM = &result.LLMMetrics{Streamed: 100}
					}
					m.LLM.TTFT.Count, m.LLM.TTFT.P50Us = 100, v
				case plan.MetricPrefixCacheHitRate:
					if m.LLM == nil {
						m.LLM = &result.LLMMetrics{Streamed: 100}
					}
					m.LLM.Engine = &result.EngineMetrics{Samples: 10, PrefixCache: &result.PrefixCache{Queries: 1e6, Hits: v * 1e6}}
				}
			}
			p.Trials = append(p.Trials, result.Trial{Index: i, Metrics: m, Disturbance: tr.Disturbance})
		}
		run.Points = append(run.Points, p)
	}
	return run
}

// shippedBaselines returns the repository root and its baselines/*.json.
func shippedBaselines(t *testing.T) (root string, files []string) {
	t.Helper()
	root = filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "baselines", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped baselines (%v)", err)
	}
	return root, files
}

package schemas_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/schemas"
)

func fullMetrics(x float64) result.Metrics {
	goodput := 90.0
	return result.Metrics{
		Throughput: 100 * x, Requests: 1000, Errors: 2, ErrorRate: 0.002,
		LatencyAvgUs: 900, LatencyStdUs: 50, LatencyMinUs: 400,
		P50Us: 880, P90Us: 1000, P95Us: 1100, P99Us: 1400, LatencyMaxUs: 3000,
		ClientSendRecvUs: 20, ClientWaitUs: 850, Responses: 300, ResponseThroughput: 1500, FirstResponseAvgUs: 400,
		Sequences: 15, Delayed: 3,
		// A figure the source did not carry: its key is left out.
		Absent: []string{"latency_min_us"},
		Server: &result.ServerStats{
			RequestCount: 998, InferenceCount: 998, ExecutionCount: 500,
			AvgRequestUs: 700, QueueUs: 50, ComputeInputUs: 10, ComputeInferUs: 600, ComputeOutputUs: 10,
			Reset: true,
		},
		Process: &result.ProcessStats{CPUUs: 310, RunQueueUs: new(42.0), PreemptUs: new(11.0), Instructions: new(1.2e6), Work: new(14.4), LegacyWork: new(130.0), WorkByCPU: true, CPUUsByCPU: []float64{200, 100}, Inferences: 998, Threads: 3},
		GPU:     &result.GPUMetrics{UtilizationAvg: 0.7, MemoryUsedMax: 1e9, MemoryTotalMax: 8e9, PowerAvgWatts: 120},
		LLM: &result.LLMMetrics{Streamed: 10,
			TTFT:         result.Distribution{Count: 10, AvgUs: 100, P50Us: 90, P90Us: 120, P95Us: 130, P99Us: 140, MaxUs: 150},
			ITL:          result.Distribution{Count: 90, AvgUs: 10, P50Us: 9, P90Us: 12, P95Us: 13, P99Us: 14, MaxUs: 15},
			TPOT:         result.Distribution{Count: 10, AvgUs: 10, P50Us: 9, P90Us: 12, P95Us: 13, P99Us: 14, MaxUs: 15},
			OutputTokens: 100, InputTokens: 50, OutputTokensPerSec: 1000, Goodput: &goodput, GoodRequests: 9,
			TokensFromUsage: 9, TokensFromChunks: 1,
			Turns: []result.TurnMetrics{{Turn: 1, Requests: 5, InputTokens: 80,
				TTFT: result.Distribution{Count: 5, AvgUs: 100, P50Us: 90, P90Us: 120, P95Us: 130, P99Us: 140, MaxUs: 150}}},
			Engine: &result.EngineMetrics{Samples: 4, Running: &result.Gauge{Avg: 3, Max: 5}, Waiting: &result.Gauge{Avg: 1, Max: 2},
				KVCacheUsage: &result.Gauge{Avg: 0.2, Max: 0.3}, PrefixCache: &result.PrefixCache{Queries: 1000, Hits: 700}}},
		ScheduleError:  &result.Distribution{Count: 10, AvgUs: 100, P50Us: 90, P90Us: 120, P95Us: 130, P99Us: 140, MaxUs: 150},
		ScheduleWait:   "realtime",
		MaxConcurrency: new(16.0), MaxRequestRate: new(120.0),
	}
}

// fullRun sets every field, so a field added to result.Run without a
// schema property fails TestResultSchemaAcceptsFullRun (and
// TestFullRunIsFull keeps this helper honest).
func fullRun() *result.Run {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return &result.Run{
		SchemaVersion: result.SchemaVersion,
		Scenario:      "quickstart",
		ScenarioPath:  "scenarios/quickstart.yaml",
		ScenarioFile:  "/src/perfscen/scenarios/quickstart.yaml",
		BaselinePath:  "/src/perfscen/baselines/quickstart.json",
		ScenarioHash:  strings.Repeat("ab", 32),
		Overrides:     []string{"measurement.window=500ms"},
		Source:        "perfscen",
		Environment: result.Environment{
			PerfscenVersion: "v0.1.0", Host: "ci-1", OS: "linux", Arch: "amd64",
			CPU: "Xeon", CPUID: "vendor_id=GenuineIntel cpu family=6 model=143 stepping=8; L2 2048K", NumCPU: 2, GPU: "none", MemoryGiB: 8, GPUModel: "NVIDIA A10", GPUCount: 1,
			Server:  result.ServerInfo{Key: "released", URL: "127.0.0.1:8000", Name: "triton", Version: "2.50.0", Extensions: []string{"statistics"}, Embedded: true, InProcess: true, Process: "the embedded server's model instances"},
			Servers: []result.ServerInfo{{Key: "candidate", URL: "127.0.0.1:9000", Name: "triton", Version: "2.51.0", Extensions: []string{"statistics"}, Embedded: true, InProcess: true, Process: "the embedded server's model instances"}},
			Testbed: "tb-1", TestbedSource: "flag",
		},
		Started:  t0,
		Finished: t0.Add(time.Minute),
		Status:   result.StatusComplete,
		Errors:   []string{"server restarted"},
		Notes:    []string{"server statistics unavailable"},
		RunID:    "20260301T120000Z-0a1b2c3d",
		Agents: []result.Agent{{Index: 1, Name: "load-1", Host: "pod-1", Address: "10.0.0.2:41000", Version: "v1",
			ClockOffsetNs: -1200, ClockErrorNs: 90000, RoundTripNs: 180000, Windows: 40, WindowBytes: 52000}},
		Verdict: &result.Verdict{Outcome: result.OutcomeFail, ExitCode: 1, Summary: "FAIL: 1 of 1 check failed: p95 < 30ms @ simple/c=1",
			Notices: []string{"no baseline yet"},
			Checks: []result.CheckOutcome{{Kind: "threshold", Name: "p95 < 30ms", Model: "simple", Point: "simple/c=1", Metric: "p95",
				Value: 31000, Unit: "us", Op: "<", Bound: 30000, Status: "fail", Message: "p95 is 31 ms", Environment: true, NoValue: true}}},
		Points: []result.Point{{
			ID: "simple/c=1", Model: "simple", ModelName: "simple", ModelVersion: "1", Server: "released", Mix: "busy",
			Protocol: "http", SharedMemory: "none", BatchSize: 1, Mode: plan.LoadConcurrency,
			Concurrency: 1, RequestRate: 10,
			Shapes: map[string][]int64{"INPUT0": {16}},
			Coords: map[string]string{"concurrency": "1"},
			Status: result.PointStable, Summary: fullMetrics(1), Figures: new(fullMetrics(1)),
			EngineSeries: []result.EngineSample{{Offset: 0.5, Running: new(3.0), Waiting: new(1.0), KVCacheUsage: new(0.25)}},
			Trials:       []result.Trial{{Index: 1, Start: t0, Duration: time.Second, Metrics: fullMetrics(1), Histogram: "SElTVA==", Disturbance: &result.Disturbance{OtherCPU: 0.2, Steal: 0.01, Load1: 1.5, RunQueueWait: new(0.3), CPUPressure: new(0.4), WakeupDelay: &result.WakeupDelay{Mean: 12, Quantiles: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, N: 500, Buckets: [][2]uint64{{3, 400}, {60, 100}}}, GEMVUs: new(210.5), GEMVUsByCPU: []float64{190.5, 230.5}, LegacyKernelUs: new(21.5), ServerCPU: new(0.45)}}},
			Windows:      []result.Window{{Index: 1, Duration: time.Second, Throughput: 100, LatencyUs: 900, Requests: 100, Errors: 1, Kept: true, Disturbance: &result.Disturbance{OtherCPU: 0.2, Steal: 0.01, Load1: 1.5, RunQueueWait: new(0.3), CPUPressure: new(0.4), WakeupDelay: &result.WakeupDelay{Mean: 12, Quantiles: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, N: 500, Buckets: [][2]uint64{{3, 400}, {60, 100}}}, GEMVUs: new(210.5), GEMVUsByCPU: []float64{190.5, 230.5}, LegacyKernelUs: new(21.5), ServerCPU: new(0.45)}}},
			Errors:       result.ErrorInfo{Count: 2, First: []string{"timeout"}, Classes: []result.ErrorClass{{Class: "timeout", Count: 2, Example: "timeout"}}},
			Validation:   result.Validation{Enabled: true, Checked: 10, Mismatches: 1, First: []string{"OUTPUT0[3]: 4 != 5"}, Sampled: true},
			LateSends:    3,
			Notes:        []string{"note"},
			Search:       "max_concurrency@p99<50ms",
			Searched: &result.SearchOutcome{Condition: "p99 < 50ms", Method: "binary", Decide: "interval", Start: 1, End: 64, Step: 1,
				Found: true, Value: 16, AllMet: true, Failing: 17, Message: "concurrency 16 meets p99 < 50ms",
				Probes: []result.Probe{{Level: 16, Point: "simple/max_concurrency@p99<50ms/c=16", Outcome: "meets", Value: 40000, Lo: 39000, Hi: 41000, Confidence: 0.95, Trials: 10, ErrorRate: 0.001, OverBudget: true, Disturbance: "the machine was too busy: load average 15.2 on 2 CPUs"}}},
			Columns: map[string]string{"Network+Server Send/Recv": "38"},
		}},
	}
}

// nonZero reports paths of zero-valued fields in v.
func nonZero(v reflect.Value, where string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{where}
		}
		return nonZero(v.Elem(), where)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			if v.Interface().(time.Time).IsZero() {
				return []string{where}
			}
			return nil
		}
		var out []string
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				out = append(out, nonZero(v.Field(i), where+"."+v.Type().Field(i).Name)...)
			}
		}
		return out
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			return []string{where}
		}
		if v.Kind() == reflect.Slice {
			return nonZero(v.Index(0), where+"[0]")
		}
		return nil
	default:
		if v.IsZero() {
			return []string{where}
		}
		return nil
	}
}

func TestFullRunIsFull(t *testing.T) {
	if zero := nonZero(reflect.ValueOf(fullRun()), "Run"); len(zero) > 0 {
		t.Errorf("fullRun leaves fields unset: %v", zero)
	}
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestResultSchemaAcceptsFullRun(t *testing.T) {
	sch, err := schemas.ResultSchema()
	if err != nil {
		t.Fatal(err)
	}
	b, err := result.Encode(fullRun())
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(decodeAny(t, b)); err != nil {
		t.Fatalf("%#v", err)
	}
	// A minimal run (empty optional parts) must validate too.
	min := &result.Run{Scenario: "x", Source: "perfscen", Status: result.StatusPartial}
	b, _ = result.Encode(min)
	if err := sch.Validate(decodeAny(t, b)); err != nil {
		t.Fatalf("minimal run: %#v", err)
	}
}

func TestResultSchemaRejects(t *testing.T) {
	sch, err := schemas.ResultSchema()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := result.Encode(fullRun())
	tests := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"unknown top-level field", func(m map[string]any) { m["surprise"] = true }},
		{"unknown point field", func(m map[string]any) { m["points"].([]any)[0].(map[string]any)["p42_us"] = 1 }},
		{"unknown metrics field", func(m map[string]any) {
			m["points"].([]any)[0].(map[string]any)["summary"].(map[string]any)["p42_us"] = 1
		}},
		{"newer schema version", func(m map[string]any) { m["schema_version"] = 2 }},
		{"bad status", func(m map[string]any) { m["status"] = "done" }},
		{"missing environment", func(m map[string]any) { delete(m, "environment") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := decodeAny(t, b).(map[string]any)
			tt.mutate(v)
			if err := sch.Validate(v); err == nil {
				t.Error("schema accepted an invalid document")
			}
		})
	}
}

// Every shipped example validates against the scenario schema directly
// (the loader checks more, see scenario.TestExamples).
func TestScenarioSchemaCompiles(t *testing.T) {
	if _, err := schemas.ScenarioSchema(); err != nil {
		t.Fatal(err)
	}
}

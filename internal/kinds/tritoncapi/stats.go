package tritoncapi

import (
	"encoding/json"
	"fmt"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kservev2"
)

// versionsServed lists the versions of model name that served requests,
// from TRITONSERVER_ServerModelStatistics' JSON.
func versionsServed(b []byte, name string) []string {
	var doc kservev2.StatisticsResponse
	if json.Unmarshal(b, &doc) != nil {
		return nil
	}
	var out []string
	for _, s := range doc.ModelStats {
		if s.Name == name && s.InferenceStats.Success.Count > 0 {
			out = append(out, s.Version)
		}
	}
	return out
}

// countersFromJSON reads TRITONSERVER_ServerModelStatistics' JSON (the
// statistics extension's document) and sums model name's versions
// (version "" takes every version listed), as the HTTP and gRPC kinds do.
func countersFromJSON(b []byte, name, version string) (kinds.Counters, error) {
	var doc kservev2.StatisticsResponse
	if err := json.Unmarshal(b, &doc); err != nil {
		return kinds.Counters{}, fmt.Errorf("statistics: %w", err)
	}
	var out kinds.Counters
	found := false
	add := func(d *kinds.Duration, x kservev2.StatDuration) {
		d.Count += x.Count
		d.Ns += x.Ns
	}
	for _, s := range doc.ModelStats {
		if s.Name != name || (version != "" && s.Version != version) {
			continue
		}
		found = true
		out.Inferences += s.InferenceCount
		out.Executions += s.ExecutionCount
		add(&out.Success, s.InferenceStats.Success)
		add(&out.Fail, s.InferenceStats.Fail)
		add(&out.Queue, s.InferenceStats.Queue)
		add(&out.ComputeInput, s.InferenceStats.ComputeInput)
		add(&out.ComputeInfer, s.InferenceStats.ComputeInfer)
		add(&out.ComputeOutput, s.InferenceStats.ComputeOutput)
	}
	if !found {
		return out, fmt.Errorf("the statistics do not list model %s", name)
	}
	return out, nil
}

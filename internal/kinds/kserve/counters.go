package kserve

import (
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kservev2"
)

// pickStats sums the statistics of model name across the versions listed;
// version "" takes every version, as the server does for an empty version.
func pickStats(list []kservev2.ModelStats, name, version string) (kinds.Counters, bool) {
	var out kinds.Counters
	found := false
	for _, s := range list {
		if s.Name != name || (version != "" && s.Version != version) {
			continue
		}
		found = true
		out.Inferences += s.InferenceCount
		out.Executions += s.ExecutionCount
		addDur(&out.Success, s.InferenceStats.Success)
		addDur(&out.Fail, s.InferenceStats.Fail)
		addDur(&out.Queue, s.InferenceStats.Queue)
		addDur(&out.ComputeInput, s.InferenceStats.ComputeInput)
		addDur(&out.ComputeInfer, s.InferenceStats.ComputeInfer)
		addDur(&out.ComputeOutput, s.InferenceStats.ComputeOutput)
	}
	return out, found
}

func addDur(d *kinds.Duration, x kservev2.StatDuration) {
	d.Count += x.Count
	d.Ns += x.Ns
}

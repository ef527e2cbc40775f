package kserve

import (
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2"
)

func stats(n uint64) kservev2.ModelStats {
	return kservev2.ModelStats{Name: "m", Version: "1", InferenceCount: n, ExecutionCount: n,
		InferenceStats: kservev2.InferStats{Success: kservev2.StatDuration{Count: n, Ns: n * 1000}}}
}

func TestPickStats(t *testing.T) {
	list := []kservev2.ModelStats{stats(10), stats(5), {Name: "other", InferenceCount: 99}}
	list[1].Version = "2"
	all, ok := pickStats(list, "m", "")
	if !ok || all.Inferences != 15 || all.Success.Count != 15 {
		t.Errorf("all versions = %+v, %v", all, ok)
	}
	v2, ok := pickStats(list, "m", "2")
	if !ok || v2.Inferences != 5 {
		t.Errorf("version 2 = %+v, %v", v2, ok)
	}
	if _, ok := pickStats(list, "missing", ""); ok {
		t.Error("found a model that is not listed")
	}
}

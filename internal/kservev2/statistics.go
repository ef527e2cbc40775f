package kservev2

import "encoding/json"

// StatDuration is a cumulative count and total time in nanoseconds.
type StatDuration struct {
	Count uint64 `json:"count"`
	Ns    uint64 `json:"ns"`
}

// Sub returns the change from an earlier snapshot, clamped at zero so a server
// restart between snapshots cannot produce wrapped counters.
func (d StatDuration) Sub(earlier StatDuration) StatDuration {
	return StatDuration{Count: subClamp(d.Count, earlier.Count), Ns: subClamp(d.Ns, earlier.Ns)}
}

func subClamp(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// InferStats is a model's "inference_stats".
type InferStats struct {
	Success       StatDuration `json:"success"`
	Fail          StatDuration `json:"fail"`
	Queue         StatDuration `json:"queue"`
	ComputeInput  StatDuration `json:"compute_input"`
	ComputeInfer  StatDuration `json:"compute_infer"`
	ComputeOutput StatDuration `json:"compute_output"`
	CacheHit      StatDuration `json:"cache_hit"`
	CacheMiss     StatDuration `json:"cache_miss"`
}

// ResponseStats is one entry of "response_stats" (decoupled models).
type ResponseStats struct {
	ComputeInfer  StatDuration `json:"compute_infer"`
	ComputeOutput StatDuration `json:"compute_output"`
	Success       StatDuration `json:"success"`
	Fail          StatDuration `json:"fail"`
	EmptyResponse StatDuration `json:"empty_response"`
	Cancel        StatDuration `json:"cancel"`
}

// BatchStats counts executions at one batch size.
type BatchStats struct {
	BatchSize     uint64       `json:"batch_size"`
	ComputeInput  StatDuration `json:"compute_input"`
	ComputeInfer  StatDuration `json:"compute_infer"`
	ComputeOutput StatDuration `json:"compute_output"`
}

// MemoryUsage is one entry of "memory_usage".
type MemoryUsage struct {
	Type     string `json:"type"`
	ID       int64  `json:"id"`
	ByteSize uint64 `json:"byte_size"`
}

// ModelStats is one entry of "model_stats"; counters are cumulative since the
// server started.
type ModelStats struct {
	Name           string                   `json:"name"`
	Version        string                   `json:"version"`
	LastInference  uint64                   `json:"last_inference"`
	InferenceCount uint64                   `json:"inference_count"`
	ExecutionCount uint64                   `json:"execution_count"`
	InferenceStats InferStats               `json:"inference_stats"`
	ResponseStats  map[string]ResponseStats `json:"response_stats"`
	BatchStats     []BatchStats             `json:"batch_stats"`
	MemoryUsage    []MemoryUsage            `json:"memory_usage"`
}

// MarshalJSON writes empty collections as {} and [] rather than null, as
// Triton does, so strict readers of the layout do not trip.
func (m ModelStats) MarshalJSON() ([]byte, error) {
	type plain ModelStats
	p := plain(m)
	if p.ResponseStats == nil {
		p.ResponseStats = map[string]ResponseStats{}
	}
	if p.BatchStats == nil {
		p.BatchStats = []BatchStats{}
	}
	if p.MemoryUsage == nil {
		p.MemoryUsage = []MemoryUsage{}
	}
	return json.Marshal(p)
}

// StatisticsResponse is the body of GET /v2/models[/{m}[/versions/{v}]]/stats.
type StatisticsResponse struct {
	ModelStats []ModelStats `json:"model_stats"`
}

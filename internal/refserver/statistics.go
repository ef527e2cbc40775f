package refserver

import (
	"sort"
	"sync"
	"time"
)

// durationStat is Triton's $duration_stat: a count and total nanoseconds.
type durationStat struct {
	Count uint64
	NS    uint64
}

func (d *durationStat) add(t time.Duration) {
	d.Count++
	if t > 0 {
		d.NS += uint64(t)
	}
}

// BatchStat is one row of batch_stats: executions at one batch size.
type BatchStat struct {
	BatchSize                                 uint64
	ComputeInput, ComputeInfer, ComputeOutput durationStat
}

// ModelStats is a snapshot of one model version's cumulative statistics in
// Triton's terms (see protocol.md §5).
type ModelStats struct {
	Name, Version                             string
	LastInference                             uint64 // ms since the Unix epoch
	InferenceCount, ExecutionCount            uint64
	Success, Fail, Queue                      durationStat
	ComputeInput, ComputeInfer, ComputeOutput durationStat
	Batches                                   []BatchStat // ascending batch size
}

// statsRecorder accumulates one model version's statistics.
type statsRecorder struct {
	mu sync.Mutex
	s  ModelStats
	by map[uint64]*BatchStat
}

func newStatsRecorder(name, version string) *statsRecorder {
	return &statsRecorder{s: ModelStats{Name: name, Version: version}, by: map[uint64]*BatchStat{}}
}

// execution records one model execution of batchSize inferences.
func (r *statsRecorder) execution(batchSize int, in, infer, out time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s.ExecutionCount++
	r.s.InferenceCount += uint64(batchSize)
	b := r.by[uint64(batchSize)]
	if b == nil {
		b = &BatchStat{BatchSize: uint64(batchSize)}
		r.by[uint64(batchSize)] = b
	}
	b.ComputeInput.add(in)
	b.ComputeInfer.add(infer)
	b.ComputeOutput.add(out)
}

// success records a completed request; all compute counts move together so
// they stay equal, as perf_analyzer requires.
func (r *statsRecorder) success(total, queue, in, infer, out time.Duration, end time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s.Success.add(total)
	r.s.Queue.add(queue)
	r.s.ComputeInput.add(in)
	r.s.ComputeInfer.add(infer)
	r.s.ComputeOutput.add(out)
	r.s.LastInference = uint64(end.UnixMilli())
}

func (r *statsRecorder) failure(total time.Duration, end time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s.Fail.add(total)
	r.s.LastInference = uint64(end.UnixMilli())
}

func (r *statsRecorder) snapshot() ModelStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.s
	s.Batches = make([]BatchStat, 0, len(r.by))
	for _, b := range r.by {
		s.Batches = append(s.Batches, *b)
	}
	sort.Slice(s.Batches, func(i, j int) bool { return s.Batches[i].BatchSize < s.Batches[j].BatchSize })
	return s
}

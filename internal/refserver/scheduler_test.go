package refserver

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// runScheduler queues jobs of the given batch sizes before any worker can
// take them, and returns the batch sizes the executions saw.
func runScheduler(t *testing.T, p batchPolicy, sizes []int, keys []string) [][]int {
	t.Helper()
	var mu sync.Mutex
	var got [][]int
	gate := make(chan struct{})
	s := newScheduler(p, func(batch []*job) {
		<-gate
		var b []int
		for _, j := range batch {
			b = append(b, j.batchSize)
			close(j.done)
		}
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
	}, preciseAfter, nil)
	// Hold the single worker with a first job so the rest queue up.
	first := &job{ctx: context.Background(), batchSize: 1, key: "hold", done: make(chan struct{})}
	s.submit(first)
	for s.pending() != 0 {
		time.Sleep(time.Millisecond)
	}
	var jobs []*job
	for i, n := range sizes {
		k := ""
		if keys != nil {
			k = keys[i]
		}
		j := &job{ctx: context.Background(), batchSize: n, key: k, done: make(chan struct{})}
		jobs = append(jobs, j)
		s.submit(j)
	}
	close(gate)
	for _, j := range jobs {
		<-j.done
	}
	s.close()
	return got[1:]
}

func TestDynamicBatching(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy batchPolicy
		sizes  []int
		keys   []string
		want   [][]int
	}{
		{"no batching", batchPolicy{instances: 1, maxBatch: 8}, []int{1, 1, 1}, nil, [][]int{{1}, {1}, {1}}},
		{"merge to max", batchPolicy{instances: 1, dynamic: true, maxBatch: 4}, []int{1, 1, 1, 1, 1, 1}, nil, [][]int{{1, 1, 1, 1}, {1, 1}}},
		{"size limit skips big job", batchPolicy{instances: 1, dynamic: true, maxBatch: 4}, []int{3, 2, 1}, nil, [][]int{{3, 1}, {2}}},
		{"incompatible shapes", batchPolicy{instances: 1, dynamic: true, maxBatch: 8}, []int{1, 1, 1}, []string{"a", "b", "a"}, [][]int{{1, 1}, {1}}},
		{"preferred size", batchPolicy{instances: 1, dynamic: true, maxBatch: 8, preferred: []int{2, 4}}, []int{1, 1, 1, 1, 1}, nil, [][]int{{1, 1, 1, 1}, {1}}},
		{"preferred on expiry", batchPolicy{instances: 1, dynamic: true, maxBatch: 8, preferred: []int{2}, delay: time.Millisecond}, []int{1, 1, 1}, nil, [][]int{{1, 1}, {1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runScheduler(t, tc.policy, tc.sizes, tc.keys)
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("batches %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStallRemaining(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := &modelParams{stallEvery: time.Second, stallFor: 200 * time.Millisecond}
	for _, tc := range []struct{ at, want time.Duration }{
		{0, 0}, {799 * time.Millisecond, 0}, {800 * time.Millisecond, 200 * time.Millisecond},
		{950 * time.Millisecond, 50 * time.Millisecond}, {1100 * time.Millisecond, 0},
	} {
		if got := stallRemaining(t0, t0.Add(tc.at), p); got != tc.want {
			t.Errorf("at %v: %v, want %v", tc.at, got, tc.want)
		}
	}
}

func TestDriftRemaining(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := &modelParams{drift: 4 * time.Millisecond, driftAfter: time.Second}
	for _, tc := range []struct{ at, want time.Duration }{
		{0, 0}, {time.Second, 0}, {1500 * time.Millisecond, 2 * time.Millisecond}, {3 * time.Second, 8 * time.Millisecond},
	} {
		if got := driftRemaining(t0, t0.Add(tc.at), p); got != tc.want {
			t.Errorf("at %v: %v, want %v", tc.at, got, tc.want)
		}
	}
	if got := driftRemaining(t0, t0.Add(time.Hour), &modelParams{}); got != 0 {
		t.Errorf("without drift: %v", got)
	}
}

func TestParams(t *testing.T) {
	for _, tc := range []struct {
		kv map[string]string
		ok bool
	}{
		{map[string]string{"delay": "5ms", "jitter": "1ms"}, true},
		{map[string]string{"error_rate": "0.5", "drop_rate": "0", "seed": "9"}, true},
		{map[string]string{"preferred_batch_sizes": "4, 2,4", "dynamic_batching": "true"}, true},
		{map[string]string{"stall_every": "1s", "stall_for": "100ms"}, true},
		{map[string]string{"stall_every": "1s", "stall_for": "1s"}, false},
		{map[string]string{"drift": "4ms", "drift_after": "1s"}, true},
		{map[string]string{"drift": "-4ms"}, false},
		{map[string]string{"delay": "-1ms"}, false},
		{map[string]string{"error_rate": "1.5"}, false},
		{map[string]string{"slowdown": "0.5"}, false},
		{map[string]string{"instance_count": "0"}, false},
		{map[string]string{"hang": "maybe"}, false},
		{map[string]string{"dleay": "5ms"}, false},
	} {
		p, err := applyParams(defaultParams(), tc.kv)
		if (err == nil) != tc.ok {
			t.Errorf("%v: err %v", tc.kv, err)
		}
		if tc.ok && tc.kv["preferred_batch_sizes"] != "" && !slices.Equal(p.preferred, []int{2, 4}) {
			t.Errorf("preferred %v", p.preferred)
		}
	}
}

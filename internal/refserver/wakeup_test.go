package refserver

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// The configured service time is what compute_infer must show: a 1 ms
// rounding would turn an injected 3% slowdown of a 10 ms model into 8%.
// The bound (3% + 250 µs on the median of 20 requests) is over ten times
// the median error seen on a 2-core machine under -race (about 15 µs), yet
// catches the millisecond rounding at 5.3 ms and 10.3 ms (about 1 ms late).
func TestServiceTimeIsPrecise(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]string
		want   time.Duration
	}{
		{"delay 2ms", map[string]string{"delay": "2ms"}, 2 * time.Millisecond},
		{"delay 5.3ms", map[string]string{"delay": "5.3ms"}, 5300 * time.Microsecond},
		{"delay 10.3ms", map[string]string{"delay": "10.3ms"}, 10300 * time.Microsecond},
		{"added_latency 5.3ms", map[string]string{"delay": "0s", "added_latency": "5.3ms"}, 5300 * time.Microsecond},
	}
	body := []byte(`{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,1],"data":[1]}]}`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, Options{Models: []string{"delay"}, ModelParams: map[string]map[string]string{"delay": tc.params}})
			const n = 20
			samples := make([]time.Duration, 0, n)
			prev := statsOf(t, s, "delay").InferenceStats.ComputeInfer
			for range n {
				if rep := do(t, s, "POST", "/v2/models/delay/infer", nil, body); rep.status != 200 {
					t.Fatalf("infer: %d %s", rep.status, rep.body)
				}
				cur := statsOf(t, s, "delay").InferenceStats.ComputeInfer
				if cur.Count != prev.Count+1 {
					t.Fatalf("compute_infer count went %d -> %d after one request", prev.Count, cur.Count)
				}
				samples = append(samples, time.Duration(cur.Ns-prev.Ns))
				prev = cur
			}
			slices.Sort(samples)
			median := samples[n/2]
			tol := tc.want*3/100 + 250*time.Microsecond
			t.Logf("median compute_infer %v for %v (min %v, max %v)", median, tc.want, samples[0], samples[n-1])
			if median < tc.want || median > tc.want+tol {
				t.Errorf("median compute_infer %v, want %v to %v (all: %v)", median, tc.want, tc.want+tol, samples)
			}
		})
	}
}

func TestSleepUntilEndsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sleepUntil(ctx, time.Now().Add(time.Hour)) }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("sleepUntil after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("sleepUntil still sleeping 5s after its context was cancelled")
	}
	if pendingHolds(time.Hour / 2) {
		t.Error("a cancelled sleep left its deadline pending")
	}
}

func TestSleepUntilEdges(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		deadline time.Time
		want     error
	}{
		{"past deadline", context.Background(), time.Now().Add(-time.Second), nil},
		{"short deadline", context.Background(), time.Now().Add(time.Millisecond), nil},
		{"already cancelled", cancelled, time.Now().Add(time.Hour), context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := sleepUntil(tc.ctx, tc.deadline)
			if !errors.Is(err, tc.want) {
				t.Fatalf("sleepUntil = %v, want %v", err, tc.want)
			}
			if err == nil && time.Now().Before(tc.deadline) {
				t.Fatalf("sleepUntil returned before its deadline")
			}
		})
	}
}

// A caller's stop must remove an earlier deadline and let the later ones
// still fire, in order.
func TestPreciseAfterStopAndOrder(t *testing.T) {
	now := time.Now()
	late, stopLate := preciseAfter(now.Add(30 * time.Millisecond))
	defer stopLate()
	_, stopEarly := preciseAfter(now.Add(time.Hour))
	stopEarly()
	stopEarly() // idempotent
	first, stopFirst := preciseAfter(now.Add(5 * time.Millisecond))
	defer stopFirst()
	select {
	case <-first:
	case <-late:
		t.Fatal("30 ms deadline fired before the 5 ms one")
	case <-time.After(5 * time.Second):
		t.Fatal("5 ms deadline never fired")
	}
	select {
	case <-late:
	case <-time.After(5 * time.Second):
		t.Fatal("30 ms deadline never fired")
	}
	if time.Now().Before(now.Add(30 * time.Millisecond)) {
		t.Fatal("30 ms deadline fired early")
	}
	if pendingHolds(time.Hour / 2) {
		t.Error("a stopped deadline is still pending")
	}
}

// pendingHolds reports whether a deadline more than d away is pending.
func pendingHolds(d time.Duration) bool {
	wakeups.mu.Lock()
	defer wakeups.mu.Unlock()
	limit := time.Now().Add(d)
	for _, w := range wakeups.pending {
		if w.at.After(limit) {
			return true
		}
	}
	return false
}

// BenchmarkSleepOvershoot reports how late sleepUntil wakes compared with
// a plain timer, for sleeps of 2.0 to 2.9 ms in 100 µs steps (so every
// sub-millisecond remainder, and hence every spin length, is covered).
func BenchmarkSleepOvershoot(b *testing.B) {
	for _, bc := range []struct {
		name  string
		sleep func(time.Time)
	}{
		{"timer", func(at time.Time) { time.Sleep(time.Until(at)) }},
		{"sleepUntil", func(at time.Time) { _ = sleepUntil(context.Background(), at) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var late []time.Duration
			for b.Loop() {
				at := time.Now().Add(2*time.Millisecond + time.Duration(len(late)%10)*100*time.Microsecond)
				bc.sleep(at)
				late = append(late, time.Since(at))
			}
			slices.Sort(late)
			b.ReportMetric(float64(late[len(late)/2].Nanoseconds())/1e3, "µs-late-p50")
			b.ReportMetric(float64(late[len(late)*9/10].Nanoseconds())/1e3, "µs-late-p90")
		})
	}
}

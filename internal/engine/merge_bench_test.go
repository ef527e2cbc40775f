package engine

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkMergeWindows merges 4 agents' reports of one window holding n
// requests in all. The cost is decoding and adding histograms of bounded
// size (1 µs to 1 h at 3 significant figures) and a few counters: it does
// not grow with n, which is why agents ship histograms, not requests.
//
//	go test -run '^$' -bench MergeWindows ./internal/engine
func BenchmarkMergeWindows(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000, 100_000_000} {
		b.Run(fmt.Sprintf("requests=%d", n), func(b *testing.B) {
			const agents = 4
			var reps []WindowReport
			bytes := 0
			for i := range agents {
				a := newAcc(0)
				a.end = time.Second
				// n/agents requests with latencies spread over 100 µs to
				// about 1 s, as a loaded server's are.
				per := n / agents
				for k := range per {
					us := int64(100 + (k*7919+i*104729)%1_000_000)
					a.hist.RecordValue(us)
					a.n++
					a.sumUs += float64(us)
				}
				r, err := reportOf(a, 0)
				if err != nil {
					b.Fatal(err)
				}
				bytes += len(r.Histogram)
				reps = append(reps, r)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := MergeWindows(reps, false); err != nil {
					b.Fatal(err)
				}
			}
			// After the loop: ResetTimer clears reported metrics.
			b.ReportMetric(float64(bytes)/agents, "hist-bytes/agent")
		})
	}
}

// BenchmarkMergeWindowsAgents merges one window of 4, 50 and 500 agents'
// reports, each agent's of 1000 requests (an agent at concurrency 1
// against a 1 ms server, 1 s windows): the coordinator's work per window
// as the fleet grows (docs/distributed.md, Scale).
func BenchmarkMergeWindowsAgents(b *testing.B) {
	for _, agents := range []int{4, 50, 500} {
		b.Run(fmt.Sprintf("agents=%d", agents), func(b *testing.B) {
			const per = 1000
			var reps []WindowReport
			bytes := 0
			for i := range agents {
				a := newAcc(0)
				a.end = time.Second
				for k := range per {
					us := int64(100 + (k*7919+i*104729)%1_000_000)
					a.hist.RecordValue(us)
					a.n++
					a.sumUs += float64(us)
				}
				r, err := reportOf(a, 0)
				if err != nil {
					b.Fatal(err)
				}
				bytes += len(r.Histogram)
				reps = append(reps, r)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := MergeWindows(reps, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(bytes)/float64(agents), "hist-bytes/agent")
		})
	}
}

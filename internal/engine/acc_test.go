package engine

import (
	"errors"
	"math"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfscen/perfscen/internal/kinds"
)

func TestAccMetrics(t *testing.T) {
	a := newAcc(0)
	// 100 requests of 1..100 ms, plus two errors.
	for i := 1; i <= 100; i++ {
		s := done(time.Duration(i)*ms+time.Second, time.Duration(i)*ms)
		s.SendRecv = 100 * time.Microsecond
		s.Wait = time.Duration(i) * ms
		a.add(s)
	}
	a.add(&sample{Outcome: kinds.Outcome{Err: errors.New("x")}})
	a.add(&sample{Outcome: kinds.Outcome{Err: errors.New("y")}})
	m := a.metrics(4, 2*time.Second)
	if m.Requests != 100 || m.Errors != 2 {
		t.Fatalf("counts = %d/%d", m.Requests, m.Errors)
	}
	if m.Throughput != 200 { // 100 × batch 4 / 2 s
		t.Errorf("throughput = %v, want 200", m.Throughput)
	}
	if math.Abs(m.ErrorRate-2.0/102) > 1e-12 {
		t.Errorf("error rate = %v", m.ErrorRate)
	}
	near := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %v, want %v ± %v", name, got, want, tol)
		}
	}
	near("avg", m.LatencyAvgUs, 50500, 1e-6)
	near("std", m.LatencyStdUs, 28866.07, 0.01) // population std of 1..100 ms
	near("min", m.LatencyMinUs, 1000, 0)
	near("max", m.LatencyMaxUs, 100000, 0)
	near("p50", m.P50Us, 50000, 50) // 3 significant figures
	near("p90", m.P90Us, 90000, 90)
	near("p99", m.P99Us, 99000, 99)
	near("send/recv", m.ClientSendRecvUs, 100, 1e-9)
	near("wait", m.ClientWaitUs, 50500, 1e-6)
	if got := a.stabilityLatencyUs(0); got != m.LatencyAvgUs {
		t.Errorf("stability latency (avg) = %v", got)
	}
	if got := a.stabilityLatencyUs(90); got != m.P90Us {
		t.Errorf("stability latency (p90) = %v", got)
	}
}

func TestAccEmptyAndClamp(t *testing.T) {
	a := newAcc(0)
	m := a.metrics(1, time.Second)
	if m.Throughput != 0 || m.LatencyAvgUs != 0 || m.P99Us != 0 {
		t.Errorf("empty metrics = %+v", m)
	}
	a.add(done(3*time.Hour, 2*time.Hour)) // beyond the histogram's range
	a.add(done(time.Second, 0))           // below its lowest value
	m = a.metrics(1, time.Second)
	if m.LatencyMaxUs != float64(2*time.Hour/time.Microsecond) || m.LatencyMinUs != 0 {
		t.Errorf("extremes = %v..%v", m.LatencyMinUs, m.LatencyMaxUs)
	}
}

func TestAccMergeAndEncode(t *testing.T) {
	a, b := newAcc(0), newAcc(time.Second)
	a.end, b.end = time.Second, 2*time.Second
	for i := 0; i < 10; i++ {
		a.add(done(time.Second, 10*ms))
		b.add(done(2*time.Second, 20*ms))
	}
	a.merge(b)
	m := a.metrics(1, a.end-a.start)
	if m.Requests != 20 || m.Throughput != 10 || m.LatencyAvgUs != 15000 {
		t.Errorf("merged = %+v", m)
	}
	enc, err := a.encodeHist()
	if err != nil {
		t.Fatal(err)
	}
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		t.Fatalf("decoding: %v", err)
	}
	if h.TotalCount() != 20 || !h.ValuesAreEquivalent(h.Max(), 20000) {
		t.Errorf("decoded count %d max %d", h.TotalCount(), h.Max())
	}
}

// The standard deviation stays exact where latencies are large against
// their spread: 50 minutes ± 1 µs. sumSq/n − mean² cancels every digit
// there (mean² ≈ 9e18, whose float64 spacing is 2048), and gives 0 or
// thousands of µs; Welford's update, merged across windows, gives √(2/3).
func TestAccStdLargeLatencies(t *testing.T) {
	const base = 50 * time.Minute
	want := math.Sqrt(2.0 / 3)
	whole, merged := newAcc(0), newAcc(0)
	for w := range 3 {
		win := newAcc(0)
		for i := range 300 {
			lat := base + time.Duration(1+(i+w)%3)*time.Microsecond
			whole.add(done(lat, lat))
			win.add(done(lat, lat))
		}
		merged.merge(win)
	}
	for name, a := range map[string]*acc{"one window": whole, "merged windows": merged} {
		m := a.metrics(1, time.Hour)
		if math.Abs(m.LatencyStdUs-want) > 1e-6 {
			t.Errorf("%s: std %v µs, want %v", name, m.LatencyStdUs, want)
		}
		if math.Abs(m.LatencyAvgUs-(float64(base/time.Microsecond)+2)) > 1e-3 {
			t.Errorf("%s: mean %v", name, m.LatencyAvgUs)
		}
	}
}

package pacompat

import (
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
)

// BenchmarkExportRequest is what --profile-export-file costs a worker per
// request, for one 224×224×3 FP32 input: the time and allocations of
// Export.Request, and the heap still held per request afterwards
// (retained-B/req, the engine's record included), which is what a long
// run accumulates.
func BenchmarkExportRequest(b *testing.B) {
	raw := make([]byte, 224*224*3*4)
	for i := range raw {
		raw[i] = byte(i % 61)
	}
	step := &inputdata.Step{Inputs: []tensor.Tensor{{Name: "INPUT0", DataType: tensor.FP32, Shape: []int64{1, 224, 224, 3}, Raw: raw}}}
	pt := &plan.Point{ID: "m/c=1", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}}
	p := defaults()
	p.ServiceKind = "triton"
	x := NewExport(p, "bench")
	if c, ok := any(x).(io.Closer); ok {
		b.Cleanup(func() { c.Close() })
	}
	t0 := time.Now()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		sent := t0.Add(time.Duration(i) * time.Millisecond)
		// As the engine's worker builds it (engine.newRecord).
		x.Request(pt, &engine.Record{Step: step, Sent: sent, Responses: []time.Time{sent.Add(time.Millisecond)}})
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "retained-B/req")
	runtime.KeepAlive(x)
}

// A worker's part of the export does not depend on the tensors sent: it
// keeps the engine's record, and converts nothing. (It used to copy each
// request's 602 KB tensor into JSON values, 1.8 MB a request.)
func TestExportRequestConvertsNothing(t *testing.T) {
	raw := make([]byte, 224*224*3*4)
	step := &inputdata.Step{Inputs: []tensor.Tensor{{Name: "INPUT0", DataType: tensor.FP32, Shape: []int64{1, 224, 224, 3}, Raw: raw}}}
	pt := &plan.Point{ID: "m/c=1", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}}
	p := defaults()
	p.ServiceKind = "triton"
	x := NewExport(p, "test")
	if c, ok := any(x).(io.Closer); ok {
		defer c.Close()
	}
	recs := make([]*engine.Record, 1000)
	for i := range recs {
		recs[i] = &engine.Record{Step: step, Sent: time.Unix(0, int64(i)), Responses: []time.Time{time.Unix(1, 0)}}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, r := range recs {
		x.Request(pt, r)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / uint64(len(recs)); per > 1<<10 {
		t.Errorf("Request allocates %d bytes a request for a %d-byte tensor", per, len(raw))
	}
}

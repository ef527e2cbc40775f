package engine

import (
	"context"
	"encoding/binary"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
)

// A decoupled model answers several responses per request on a stream: the
// request completes at the final response, as in perf_analyzer, and the
// first response's latency and the response count are reported apart. On
// the fake clock the server's delays are the latencies, exactly.
func TestRunDecoupledStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{HTTPAddr: "-", Models: []string{"repeat_int32"}})
		c := newClient(t, "grpc", srv.GRPCAddr())
		u32 := func(name string, shape []int64, vals ...uint32) tensor.Tensor {
			raw := make([]byte, 4*len(vals))
			for i, v := range vals {
				binary.LittleEndian.PutUint32(raw[4*i:], v)
			}
			return tensor.Tensor{Name: name, DataType: tensor.UINT32, Shape: shape, Raw: raw}
		}
		// Three responses, 10, 30 and 50 ms after the request; the model
		// releases its instance at once, so requests never queue.
		d := &inputdata.Data{Streams: [][]inputdata.Step{{{Inputs: []tensor.Tensor{
			int32Tensor("IN", []int64{3}, []int32{7, 8, 9}), u32("DELAY", []int64{3}, 10, 20, 20), u32("WAIT", []int64{1}, 0),
		}}}}, BatchSize: 1}
		p := testPlan(srv.GRPCAddr(), "grpc", loose(), []plan.Model{{Alias: "m", Name: "repeat_int32"}},
			plan.Point{Load: plan.Load{Mode: "iterations", Concurrency: 2, Iterations: 6, Streaming: true}})
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(d))}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := run.Points[0].Summary
		if s.Requests != 6 || run.Points[0].Errors.Count != 0 || s.Responses != 18 {
			t.Fatalf("requests %d, responses %d, errors %+v", s.Requests, s.Responses, run.Points[0].Errors)
		}
		if s.LatencyMinUs != 50_000 || s.LatencyMaxUs != 50_000 || s.FirstResponseAvgUs != 10_000 {
			t.Errorf("latency min %.0fus max %.0fus, first response avg %.0fus; want 50000, 50000 and 10000", s.LatencyMinUs, s.LatencyMaxUs, s.FirstResponseAvgUs)
		}
	})
}

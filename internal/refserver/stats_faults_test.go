package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/kservev2"
)

func statsOf(t testing.TB, s *Server, model string) kservev2.ModelStats {
	t.Helper()
	rep := do(t, s, "GET", "/v2/models/"+model+"/stats", nil, nil)
	var sr kservev2.StatisticsResponse
	if err := json.Unmarshal(rep.body, &sr); err != nil || len(sr.ModelStats) != 1 {
		t.Fatalf("stats %s (%v)", rep.body, err)
	}
	return sr.ModelStats[0]
}

func mlpBody(t testing.TB, batch int) []byte {
	x := make([]float32, batch*mlpIn)
	for i := range x {
		x[i] = float32(i%7) / 7
	}
	return mustJSON(t, map[string]any{"inputs": []any{map[string]any{
		"name": "INPUT0", "datatype": "FP32", "shape": []int{batch, mlpIn}, "data": x}}})
}

func TestStatisticsCountRequestsAndBatches(t *testing.T) {
	s := startServer(t, Options{Models: []string{"mlp_optimized"}, ModelParams: map[string]map[string]string{
		"mlp_optimized": {"max_queue_delay": "50ms", "instance_count": "1"}}})
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		body := mlpBody(t, 1+i%2)
		wg.Go(func() {
			rep, err := doAsync(s, "POST", "/v2/models/mlp_optimized/infer", body)
			if err != nil || rep.status != 200 {
				t.Errorf("status %d: %v %s", rep.status, err, rep.body)
			}
		})
	}
	wg.Wait()
	do(t, s, "POST", "/v2/models/mlp_optimized/infer", nil, []byte(`{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,3],"data":[1,2,3]}]}`))
	st := statsOf(t, s, "mlp_optimized")
	is := st.InferenceStats
	if is.Success.Count != n || is.Queue.Count != n || is.ComputeInput.Count != n || is.ComputeInfer.Count != n || is.ComputeOutput.Count != n {
		t.Fatalf("counts %+v", is)
	}
	if is.Fail.Count != 0 {
		t.Errorf("fail count %d after a wrong-shape request, want 0: rejected before queueing", is.Fail.Count)
	}
	if st.InferenceCount != 12 {
		t.Errorf("inference_count %d, want 12", st.InferenceCount)
	}
	var execs, inferences uint64
	for _, b := range st.BatchStats {
		execs += b.ComputeInfer.Count
		inferences += b.BatchSize * b.ComputeInfer.Count
	}
	if execs != st.ExecutionCount || inferences != st.InferenceCount || st.ExecutionCount >= n {
		t.Errorf("execution_count %d, batch_stats %+v: want merged executions", st.ExecutionCount, st.BatchStats)
	}
	if is.Success.Ns < is.Queue.Ns+is.ComputeInfer.Ns || is.ComputeInfer.Ns == 0 || st.LastInference == 0 {
		t.Errorf("durations %+v last %d", is, st.LastInference)
	}
}

func TestFaultErrorRateIsSeeded(t *testing.T) {
	run := func() []int {
		s := startServer(t, Options{Models: []string{"simple"}, ModelParams: map[string]map[string]string{
			"simple": {"error_rate": "0.5", "seed": "42"}}})
		var codes []int
		for range 20 {
			codes = append(codes, do(t, s, "POST", "/v2/models/simple/infer", nil, simpleJSONBody(t)).status)
		}
		return codes
	}
	a, b := run(), run()
	fails := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("runs differ: %v vs %v", a, b)
		}
		if a[i] == 500 {
			fails++
		} else if a[i] != 200 {
			t.Fatalf("status %d", a[i])
		}
	}
	if fails == 0 || fails == 20 {
		t.Fatalf("error_rate 0.5 gave %d failures of 20", fails)
	}
}

func TestFaultDropAndHang(t *testing.T) {
	s := startServer(t, Options{Models: []string{"simple", "delay"}})
	if err := s.SetModelParameter("simple", "drop_rate", "1"); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "http://"+s.HTTPAddr()+"/v2/models/simple/infer", strings.NewReader(string(simpleJSONBody(t))))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("dropped request answered %d", resp.StatusCode)
	}
	c := grpcClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.ModelInfer(ctx, simpleGRPCRequest("d")); status.Code(err) != codes.Unavailable {
		t.Fatalf("gRPC drop: %v", err)
	}

	if err := s.SetModelParameter("delay", "hang", "true"); err != nil {
		t.Fatal(err)
	}
	hctx, hcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer hcancel()
	body := `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,2],"data":[1,2]}]}`
	hreq, _ := http.NewRequestWithContext(hctx, "POST", "http://"+s.HTTPAddr()+"/v2/models/delay/infer", strings.NewReader(body))
	_, err := http.DefaultClient.Do(hreq)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hung request: %v", err)
	}
	if err := s.SetModelParameter("delay", "hang", "false"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetModelParameter("delay", "delay", "1ms"); err != nil {
		t.Fatal(err)
	}
	if rep := do(t, s, "POST", "/v2/models/delay/infer", nil, []byte(body)); rep.status != 200 {
		t.Fatalf("after hang: %d %s", rep.status, rep.body)
	}
	if err := s.SetModelParameter("delay", "delay", "soon"); err == nil {
		t.Fatal("bad duration accepted")
	}
}

func TestUnloadAndReload(t *testing.T) {
	s := startServer(t, Options{Models: []string{"simple"}})
	if rep := do(t, s, "POST", "/v2/repository/models/simple/unload", nil, nil); rep.status != 200 {
		t.Fatalf("unload %d", rep.status)
	}
	if rep := do(t, s, "POST", "/v2/models/simple/infer", nil, simpleJSONBody(t)); rep.status != 404 {
		t.Fatalf("infer after unload: %d", rep.status)
	}
	if rep := do(t, s, "POST", "/v2/repository/index", nil, []byte(`{"ready":true}`)); string(rep.body) != "[]" {
		t.Fatalf("ready index %s", rep.body)
	}
	if rep := do(t, s, "POST", "/v2/repository/models/simple/load", nil, nil); rep.status != 200 {
		t.Fatalf("load %d", rep.status)
	}
	if rep := do(t, s, "POST", "/v2/models/simple/infer", nil, simpleJSONBody(t)); rep.status != 200 {
		t.Fatalf("infer after load: %d", rep.status)
	}
}

func TestSequenceAccumulate(t *testing.T) {
	s := startServer(t, Options{Models: []string{"accumulate"}})
	send := func(v int, params map[string]any) httpReply {
		return do(t, s, "POST", "/v2/models/accumulate/infer", nil, mustJSON(t, map[string]any{
			"parameters": params,
			"inputs":     []any{map[string]any{"name": "INPUT", "datatype": "INT32", "shape": []int{1}, "data": []int{v}}}}))
	}
	if rep := send(1, nil); rep.status != 400 {
		t.Fatalf("no sequence id: %d", rep.status)
	}
	if rep := send(1, map[string]any{"sequence_id": 5}); rep.status != 400 {
		t.Fatalf("no start: %d", rep.status)
	}
	var last string
	for i, v := range []int{3, 4, 5} {
		rep := send(v, map[string]any{"sequence_id": 5, "sequence_start": i == 0, "sequence_end": i == 2})
		if rep.status != 200 {
			t.Fatalf("step %d: %d %s", i, rep.status, rep.body)
		}
		last = string(rep.body)
	}
	if !strings.Contains(last, `"data":[12]`) {
		t.Fatalf("final %s", last)
	}
}

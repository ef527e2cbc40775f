package pacompat

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
)

// The export holds what each kind sent and received in perf_analyzer's
// forms, one experiment a level in the order first seen, requests by
// send time, failed requests left out.
func TestExport(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	step := func(ts ...tensor.Tensor) *inputdata.Step { return &inputdata.Step{Inputs: ts} }
	c2 := &plan.Point{ID: "m/c=2", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 2}}
	r5 := &plan.Point{ID: "m/r=5", Load: plan.Load{Mode: plan.LoadRequestRate, Rate: 5}}
	iv := &plan.Point{ID: "m/r=25", Load: plan.Load{Mode: plan.LoadRequestRate, Rate: 25, Distribution: plan.Intervals}}
	bytesIn := tensor.Tensor{Name: "S", DataType: tensor.BYTES, Shape: []int64{2}, Raw: tensor.EncodeBytesElements([][]byte{[]byte("a"), []byte("b")})}
	oneByte := tensor.Tensor{Name: "T", DataType: tensor.BYTES, Shape: []int64{1}, Raw: tensor.EncodeBytesElements([][]byte{[]byte("x")})}
	ints := tensor.Tensor{Name: "I", DataType: tensor.INT32, Shape: []int64{1, 2}, Raw: tensor.EncodeInt32s([]int32{3, -4})}

	tests := []struct {
		name string
		kind string
		add  func(x *Export)
		want string
	}{
		{"triton", "triton", func(x *Export) {
			x.Window(c2, at(0), at(1000))
			x.Request(c2, &engine.Record{Step: step(ints, bytesIn, oneByte), Sent: at(20), Responses: []time.Time{at(30)}, SequenceID: 7})
			x.Request(c2, &engine.Record{Step: step(ints), Sent: at(10), Responses: []time.Time{at(12), at(15)}})
			x.Request(c2, &engine.Record{Step: step(ints), Sent: at(11), Err: errors.New("refused")})
			x.Request(r5, &engine.Record{Step: step(ints), Sent: at(2000), Responses: []time.Time{at(2001)}})
			x.Window(c2, at(1000), at(2000))
		}, `{"experiments":[
			{"experiment":{"mode":"concurrency","value":2},"requests":[
				{"timestamp":100010000000,"request_inputs":{"I":[3,-4]},"response_timestamps":[100012000000,100015000000],"response_outputs":[{},{}]},
				{"timestamp":100020000000,"sequence_id":7,"request_inputs":{"I":[3,-4],"S":["a","b"],"T":"x"},"response_timestamps":[100030000000],"response_outputs":[{}]}],
			 "window_boundaries":[100000000000,101000000000,101000000000,102000000000]},
			{"experiment":{"mode":"request_rate","value":5},"requests":[
				{"timestamp":102000000000,"request_inputs":{"I":[3,-4]},"response_timestamps":[102001000000],"response_outputs":[{}]}],
			 "window_boundaries":[]}],
			"version":"perfscen pa v1","service_kind":"triton","endpoint":""}`},
		{"openai", "openai", func(x *Export) {
			body := tensor.Tensor{Name: "payload", DataType: tensor.BYTES, Shape: []int64{1}, Raw: []byte(`{"stream":true}`)}
			x.Request(iv, &engine.Record{Step: step(body), Sent: at(0), Responses: []time.Time{at(5), at(9)},
				Outputs: [][]byte{[]byte(`{"choices":[]}`), []byte("[DONE]")}})
			whole := tensor.Tensor{Name: "payload", DataType: tensor.BYTES, Shape: []int64{1}, Raw: []byte(`{"stream":false}`)}
			x.Request(iv, &engine.Record{Step: step(whole), Sent: at(1), Responses: []time.Time{at(8)}, Outputs: [][]byte{[]byte(`{"choices":[1]}`)}})
		}, `{"experiments":[
			{"experiment":{"mode":"request_rate","value":0},"requests":[
				{"timestamp":100000000000,"request_inputs":{"payload":"{\"stream\":true}"},"response_timestamps":[100005000000,100009000000],
				 "response_outputs":[{"response":"data: {\"choices\":[]}\n\n"},{"response":"data: [DONE]\n\n"}]},
				{"timestamp":100001000000,"request_inputs":{"payload":"{\"stream\":false}"},"response_timestamps":[100008000000],
				 "response_outputs":[{"response":"{\"choices\":[1]}"}]}],
			 "window_boundaries":[]}],
			"version":"perfscen pa v1","service_kind":"openai","endpoint":"v1/chat/completions"}`},
		{"dynamic_grpc", "dynamic_grpc", func(x *Export) {
			msg := tensor.Tensor{Name: "message", DataType: tensor.BYTES, Shape: []int64{1}, Raw: []byte{0x0a, 0x05, 0xff}}
			x.Request(c2, &engine.Record{Step: step(msg), Sent: at(0), Responses: []time.Time{at(1)}})
		}, `{"experiments":[
			{"experiment":{"mode":"concurrency","value":2},"requests":[
				{"timestamp":100000000000,"request_inputs":{"message":"CgX/"},"response_timestamps":[100001000000],"response_outputs":[{}]}],
			 "window_boundaries":[]}],
			"version":"perfscen pa v1","service_kind":"dynamic_grpc","endpoint":""}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := defaults()
			p.ServiceKind = tc.kind
			if tc.kind == "openai" {
				p.Endpoint = "v1/chat/completions"
			}
			x := NewExport(p, "v1")
			tc.add(x)
			b, err := x.JSON()
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if d := gocmp.Diff(want, got); d != "" {
				t.Errorf("export (-want +got):\n%s", d)
			}
		})
	}
}

// exportRecords hands a run's records to request and window: three
// experiments (one with no request), requests out of send order, equal
// send times, sequence ids, BYTES inputs with characters JSON escapes,
// failures, responses without a time, and openai outputs.
func exportRecords(request func(*plan.Point, *engine.Record), window func(*plan.Point, time.Time, time.Time)) {
	t0 := time.Unix(100, 0)
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	ints := &inputdata.Step{Inputs: []tensor.Tensor{{Name: "I", DataType: tensor.INT32, Shape: []int64{1, 2}, Raw: tensor.EncodeInt32s([]int32{3, -4})}}}
	odd := &inputdata.Step{Inputs: []tensor.Tensor{{Name: "S", DataType: tensor.BYTES, Shape: []int64{1},
		Raw: tensor.EncodeBytesElements([][]byte{[]byte("<a&b>\"\n\u2028")})}}}
	pts := []*plan.Point{{ID: "c1", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}},
		{ID: "c2", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 2}},
		{ID: "r5", Load: plan.Load{Mode: plan.LoadRequestRate, Rate: 5}}}
	window(pts[1], at(0), at(1000))
	for i := range 500 {
		r := &engine.Record{Step: []*inputdata.Step{ints, odd, nil}[i%3], Sent: at(1000 - i%250), Responses: []time.Time{at(2000 + i)}, SequenceID: uint64(i % 4)}
		switch i % 7 {
		case 3:
			r.Err = errors.New("refused")
		case 5:
			r.Responses = append(r.Responses, at(3000+i))
			r.Outputs = [][]byte{[]byte(`{"choices":["<x>"]}`), []byte("[DONE]")}
		case 6:
			r.Responses = nil
		}
		request(pts[[]int{0, 2}[i%2]], r)
	}
	window(pts[0], at(0), at(1000))
}

// referenceExport is the file the records give held in memory and
// marshalled at once, as perf_analyzer writes it.
func referenceExport(t *testing.T, p *Params) []byte {
	t.Helper()
	f := ExportFile{Experiments: []ExportExperiment{}, Version: "perfscen pa v1", ServiceKind: p.ServiceKind, Endpoint: p.Endpoint}
	x := NewExport(p, "v1")
	by := map[string]int{}
	exp := func(pt *plan.Point) *ExportExperiment {
		i, ok := by[pt.ID]
		if !ok {
			i = len(f.Experiments)
			by[pt.ID] = i
			f.Experiments = append(f.Experiments, ExportExperiment{Experiment: exportLoad(pt), Requests: []ExportRequest{}, WindowBoundaries: []uint64{}})
		}
		return &f.Experiments[i]
	}
	exportRecords(func(pt *plan.Point, r *engine.Record) {
		e := exp(pt)
		if r.Err != nil {
			return
		}
		req := ExportRequest{Timestamp: ns(r.Sent), SequenceID: r.SequenceID, RequestInputs: x.inputs(r.Step),
			ResponseTimestamps: []uint64{}, ResponseOutputs: []map[string]any{}}
		for i, at := range r.Responses {
			req.ResponseTimestamps = append(req.ResponseTimestamps, ns(at))
			out := map[string]any{}
			if i < len(r.Outputs) {
				out["response"] = sseResponse(r.Outputs[i], len(r.Outputs) > 1)
			}
			req.ResponseOutputs = append(req.ResponseOutputs, out)
		}
		e.Requests = append(e.Requests, req)
	}, func(pt *plan.Point, start, end time.Time) {
		e := exp(pt)
		e.WindowBoundaries = append(e.WindowBoundaries, ns(start), ns(end))
	})
	for i := range f.Experiments {
		slices.SortStableFunc(f.Experiments[i].Requests, func(a, b ExportRequest) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The file is written a request at a time, spilled records merged back,
// and it is byte for byte what marshalling it whole gives; the spill's
// temporary file is gone after Close.
func TestExportStreamsAndSpills(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p := defaults()
	p.ServiceKind, p.Endpoint = "openai", "v1/<chat>"
	want := referenceExport(t, p)
	for _, tc := range []struct {
		name  string
		spill int
		cache int
	}{
		{"in memory", defaultSpillBytes, defaultCacheBytes},
		{"a spill every record", 1, defaultCacheBytes},
		{"a spill every few records, no cache", 2000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := NewExport(p, "v1")
			x.spillBytes, x.cacheBytes = tc.spill, tc.cache
			exportRecords(x.Request, x.Window)
			for range 2 { // writing twice gives the same
				got, err := x.JSON()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("export differs from marshalling it whole:\n%s", cmpDiffLines(want, got))
				}
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
	// An export with nothing in it.
	x := NewExport(p, "v1")
	got, err := x.JSON()
	if err != nil {
		t.Fatal(err)
	}
	want, _ = json.MarshalIndent(ExportFile{Experiments: []ExportExperiment{}, Version: "perfscen pa v1", ServiceKind: "openai", Endpoint: "v1/<chat>"}, "", "  ")
	if !bytes.Equal(got, want) {
		t.Errorf("empty export:\n%s", cmpDiffLines(want, got))
	}
}

func cmpDiffLines(want, got []byte) string {
	return gocmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n"))
}

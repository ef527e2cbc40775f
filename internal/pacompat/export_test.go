package pacompat

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("export (-want +got):\n%s", d)
			}
		})
	}
}

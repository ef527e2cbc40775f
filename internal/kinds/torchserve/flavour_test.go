package torchserve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
)

// startFlavour serves the built-in models through the flavour on
// ephemeral loopback ports.
func startFlavour(t *testing.T, params map[string]map[string]string) map[string]string {
	t.Helper()
	core, err := refserver.New(refserver.Options{ModelParams: params, HTTPAddr: "-", GRPCAddr: "-"})
	if err != nil {
		t.Fatal(err)
	}
	fe, err := Kind{}.ServeFlavour(context.Background(), core, map[string]string{
		EndpointInference: "127.0.0.1:0", EndpointManagement: "127.0.0.1:0", EndpointMetrics: "127.0.0.1:0"}, nil)
	if err != nil {
		core.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fe.Close()
		core.Close()
		http.DefaultClient.CloseIdleConnections()
	})
	eps := fe.Endpoints()
	for k, v := range eps {
		eps[k] = "http://" + v
	}
	return eps
}

func call(t *testing.T, method, url, ct string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const simpleBody = `{"INPUT0": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16], "INPUT1": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}`
const simpleReply = `{"OUTPUT0": [2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17], "OUTPUT1": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}`

func TestFlavourPredictions(t *testing.T) {
	eps := startFlavour(t, map[string]map[string]string{"identity_int32": {"error_rate": "1"}})
	inf := eps[EndpointInference]
	form, formCT := multipartBody("data", "", []byte(simpleBody))
	tests := []struct {
		name, path, ct string
		body           []byte
		status         int
		reply          string
	}{
		{"keyed json", "/predictions/simple", ctJSON, []byte(simpleBody), 200, simpleReply},
		{"data wrapper", "/predictions/simple/1", "application/octet-stream", []byte(`{"data": ` + simpleBody + `}`), 200, simpleReply},
		{"multipart part data", "/predictions/simple", formCT, form, 200, simpleReply},
		{"no content type", "/predictions/simple", "", []byte(simpleBody), 200, simpleReply},
		{"bare list, one input", "/predictions/identity_fp32", ctText, []byte(`[1.5, 2, [3]]`), 200, `{"OUTPUT0": [1.5,2,3]}`},
		{"data list, one input", "/predictions/identity_bytes", ctJSON, []byte(`{"data": ["a", "bc"]}`), 200, `{"OUTPUT0": ["a","bc"]}`},
		{"url-encoded form", "/predictions/simple", "application/x-www-form-urlencoded", []byte(simpleBody), 503, "URL-encoded form"},
		{"bare list, two inputs", "/predictions/simple", ctJSON, []byte(`[1]`), 503, "a bare array feeds a model with one input"},
		{"wrong count", "/predictions/simple", ctJSON, []byte(`{"INPUT0": [1], "INPUT1": [1]}`), 503, "1 values for dims [16]"},
		{"missing input", "/predictions/simple", ctJSON, []byte(`{"INPUT0": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}`), 503, "input INPUT1 is missing"},
		{"unknown key", "/predictions/simple", ctJSON, []byte(`{"x": 1}`), 503, "keys [x] are not inputs of model simple"},
		{"empty", "/predictions/simple", ctJSON, nil, 503, "no input found"},
		{"unknown model", "/predictions/nosuch", ctJSON, []byte(`[1]`), 404, `"ModelNotFoundException"`},
		{"sequence model not served", "/predictions/accumulate", ctJSON, []byte(`[1]`), 404, "Model not found: accumulate"},
		{"unknown version", "/predictions/simple/9.9", ctJSON, []byte(simpleBody), 404, "Model version: 9.9 does not exist for model: simple"},
		{"model failure", "/predictions/identity_int32", ctJSON, []byte(`[1]`), 503, "Prediction failed"},
		{"deeper path", "/predictions/simple/1/x", ctJSON, nil, 404, "ResourceNotFoundException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, reply := call(t, http.MethodPost, inf+tt.path, tt.ct, tt.body)
			if status != tt.status || !strings.Contains(reply, tt.reply) {
				t.Errorf("got %d %s, want %d %s", status, reply, tt.status, tt.reply)
			}
		})
	}
	if status, reply := call(t, http.MethodGet, inf+"/ping", "", nil); status != 200 || !strings.Contains(reply, `"Healthy"`) {
		t.Errorf("ping: %d %s", status, reply)
	}
	if status, _ := call(t, http.MethodGet, inf+"/predictions/simple", "", nil); status != 405 {
		t.Errorf("GET predictions: %d", status)
	}
	// Predictions are counted per model and version label, successes
	// only, as TorchServe counts them.
	_, text := call(t, http.MethodGet, eps[EndpointMetrics]+"/metrics", "", nil)
	fams, err := parseMetrics([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if c := countersOf(fams, "simple", "default"); c.Inferences != 3 || c.Success.Ns == 0 {
		t.Errorf("simple/default counters %+v\n%s", c, text)
	}
	if c := countersOf(fams, "simple", "1"); c.Inferences != 1 {
		t.Errorf("simple/1 counters %+v", c)
	}
	if c := countersOf(fams, "identity_int32", "default"); c.Inferences != 0 {
		t.Errorf("failed predictions counted: %+v", c)
	}
}

func TestFlavourDropsConnections(t *testing.T) {
	eps := startFlavour(t, map[string]map[string]string{"simple": {"drop_rate": "1"}})
	req, _ := http.NewRequest(http.MethodPost, eps[EndpointInference]+"/predictions/simple", strings.NewReader(simpleBody))
	req.Header.Set("Content-Type", ctJSON)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("a dropped request was answered %d", resp.StatusCode)
	}
}

func TestFlavourManagement(t *testing.T) {
	eps := startFlavour(t, map[string]map[string]string{"delay": {"instance_count": "3"}})
	mgmt := eps[EndpointManagement]
	status, body := call(t, http.MethodGet, mgmt+"/models", "", nil)
	var list struct {
		Models []modelEntry `json:"models"`
	}
	if status != 200 || json.Unmarshal([]byte(body), &list) != nil {
		t.Fatalf("list: %d %s", status, body)
	}
	names := map[string]bool{}
	for _, m := range list.Models {
		names[m.ModelName] = true
	}
	if !names["simple"] || !names["delay"] || names["accumulate"] {
		t.Errorf("listed %v", names)
	}
	for _, path := range []string{"/models/delay", "/models/delay/1", "/models/delay/all"} {
		status, body = call(t, http.MethodGet, mgmt+path, "", nil)
		var d []modelDesc
		if status != 200 || json.Unmarshal([]byte(body), &d) != nil || len(d) != 1 {
			t.Fatalf("%s: %d %s", path, status, body)
		}
		if n, _ := d[0].readyWorkers(); n != 3 || d[0].MinWorkers != 3 || d[0].ModelVersion != "1" {
			t.Errorf("%s: %+v", path, d[0])
		}
	}
	for path, want := range map[string]string{"/models/nosuch": "ModelNotFoundException", "/models/delay/2": "ModelVersionNotFoundException", "/ping": "ResourceNotFoundException"} {
		if status, body := call(t, http.MethodGet, mgmt+path, "", nil); status != 404 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s", path, status, body)
		}
	}
	if status, _ := call(t, http.MethodDelete, mgmt+"/models/delay", "", nil); status != 405 {
		t.Errorf("DELETE: %d", status)
	}
}

func TestDecodeInputs(t *testing.T) {
	core, err := refserver.New(refserver.Options{HTTPAddr: "-", GRPCAddr: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	fp16, _ := core.Model("identity_fp16")
	ins, err := decodeInputs(fp16, []byte(`[[0.5, 1], [2, 4]]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) != 1 || ins[0].DataType != tensor.FP16 || len(ins[0].Shape) != 2 || ins[0].Shape[0] != 1 || ins[0].Shape[1] != 4 {
		t.Errorf("fp16 input %+v", ins)
	}
	mlp, _ := core.Model("mlp_reference")
	if _, err := decodeInputs(mlp, []byte(`{"INPUT0": [1, 2]}`)); err == nil || !strings.Contains(err.Error(), "2 values for dims") {
		t.Errorf("short mlp input: %v", err)
	}
}

func FuzzDecodeInputs(f *testing.F) {
	core, err := refserver.New(refserver.Options{Models: []string{"simple", "identity_bytes"}, HTTPAddr: "-", GRPCAddr: "-"})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { core.Close() })
	simple, _ := core.Model("simple")
	bytesModel, _ := core.Model("identity_bytes")
	f.Add([]byte(simpleBody))
	f.Add([]byte(`{"data": ["a", ["b"]]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, m := range []refserver.ModelInfo{simple, bytesModel} {
			ins, err := decodeInputs(m, in)
			if err != nil {
				continue
			}
			for _, x := range ins {
				if err := x.Check(); err != nil {
					t.Errorf("%s: decoded an inconsistent tensor: %v", m.Name, err)
				}
			}
		}
	})
}

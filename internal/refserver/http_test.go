package refserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func simpleJSONBody(t testing.TB) []byte {
	in0 := make([]int, 16)
	in1 := make([]int, 16)
	for i := range in0 {
		in0[i], in1[i] = i, 1
	}
	return mustJSON(t, map[string]any{
		"id": "r1",
		"inputs": []any{
			map[string]any{"name": "INPUT0", "datatype": "INT32", "shape": []int{1, 16}, "data": in0},
			map[string]any{"name": "INPUT1", "datatype": "INT32", "shape": []int{1, 16}, "data": in1},
		},
	})
}

func TestHTTPSimpleJSON(t *testing.T) {
	s := startServer(t, Options{Models: []string{"simple"}})
	rep := do(t, s, http.MethodPost, "/v2/models/simple/infer", nil, simpleJSONBody(t))
	if rep.status != 200 {
		t.Fatalf("status %d: %s", rep.status, rep.body)
	}
	var resp struct {
		ID           string `json:"id"`
		ModelName    string `json:"model_name"`
		ModelVersion string `json:"model_version"`
		Outputs      []struct {
			Name  string  `json:"name"`
			Shape []int64 `json:"shape"`
			Data  []int32 `json:"data"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(rep.body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.ID != "r1" || resp.ModelName != "simple" || resp.ModelVersion != "1" || len(resp.Outputs) != 2 {
		t.Fatalf("response %s", rep.body)
	}
	for i := range 16 {
		if resp.Outputs[0].Data[i] != int32(i+1) || resp.Outputs[1].Data[i] != int32(i-1) {
			t.Fatalf("element %d: got %d, %d", i, resp.Outputs[0].Data[i], resp.Outputs[1].Data[i])
		}
	}
}

func TestHTTPRoutes(t *testing.T) {
	s := startServer(t, Options{Models: []string{"simple", "identity_fp32"}})
	for _, tc := range []struct {
		method, path string
		status       int
		contains     string
	}{
		{"GET", "/v2/health/live", 200, ""},
		{"GET", "/v2/health/ready", 200, ""},
		{"POST", "/v2/health/ready", 405, `"Method Not Allowed"`},
		{"GET", "/v2/nope", 404, `"Not Found"`},
		{"GET", "/v2", 200, `"name":"triton"`},
		{"GET", "/v2/models/simple", 200, `"shape":[-1,16]`},
		{"GET", "/v2/models/simple/versions/1", 200, `"versions":["1"]`},
		{"GET", "/v2/models/simple/versions/2", 404, "Request for unknown model: 'simple' version 2"},
		{"GET", "/v2/models/nomodel", 404, "Request for unknown model: 'nomodel' is not found"},
		{"GET", "/v2/models/simple/ready", 200, ""},
		{"GET", "/v2/models/delay/ready", 400, "Model version not ready"},
		{"GET", "/v2/models/simple/config", 200, `"data_type":"TYPE_INT32"`},
		{"GET", "/v2/models/simple/stats", 200, `"batch_stats":[]`},
		{"GET", "/v2/models/stats", 200, `"identity_fp32"`},
		{"POST", "/v2/repository/index", 200, `"state":"UNAVAILABLE"`},
		{"GET", "/v2/systemsharedmemory/status", 200, `[]`},
		{"GET", "/v2/systemsharedmemory/region/x/status", 404, "Unable to find system shared memory region"},
		{"GET", "/v2/cudasharedmemory/status", 200, "[]"},
		{"POST", "/v2/cudasharedmemory/unregister", 200, ""},
		{"POST", "/v2/cudasharedmemory/region/g/register", 400, "GPUs not supported"},
	} {
		rep := do(t, s, tc.method, tc.path, nil, nil)
		if rep.status != tc.status || !strings.Contains(string(rep.body), tc.contains) {
			t.Errorf("%s %s: got %d %s, want %d containing %q", tc.method, tc.path, rep.status, rep.body, tc.status, tc.contains)
		}
	}
}

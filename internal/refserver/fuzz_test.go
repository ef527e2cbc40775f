package refserver

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2"
)

// FuzzHTTPInfer feeds arbitrary bodies and header lengths to the infer
// handler: it must answer 2xx or 4xx and never panic.
func FuzzHTTPInfer(f *testing.F) {
	f.Add([]byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]},{"name":"INPUT1","datatype":"INT32","shape":[1,16],"data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]}`), -1, "simple")
	hdr := `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":8}}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`
	f.Add(append([]byte(hdr), 0, 0, 128, 63, 0, 0, 0, 64), len(hdr), "identity_fp32")
	f.Add([]byte{1, 2, 3, 4}, 0, "identity_int32")
	f.Add([]byte(`{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,1],"data":["x"]}]}`), -1, "identity_bytes")
	f.Add([]byte(`{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,2],"parameters":{"binary_data_size":5}}]}`+"\x01\x00\x00\x00a"), 79, "identity_bytes")
	f.Add([]byte(`{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,1],"parameters":{"shared_memory_region":"r","shared_memory_byte_size":4}}]}`), -1, "delay")
	f.Add([]byte(`{"inputs":[`), -1, "simple")
	s, err := New(Options{HTTPAddr: "-", GRPCAddr: "-", ModelParams: map[string]map[string]string{"delay": {"delay": "0s"}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body []byte, headerLen int, model string) {
		if strings.Contains(model, "/") {
			return
		}
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
		req.URL.Path = "/v2/models/" + model + "/infer"
		if headerLen >= 0 {
			req.Header.Set(kservev2.HeaderContentLength, strconv.Itoa(headerLen))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if c := rec.Code; !(c >= 200 && c < 300) && !(c >= 400 && c < 500) {
			t.Fatalf("status %d for body %q header length %d: %s", c, body, headerLen, rec.Body.Bytes())
		}
	})
}

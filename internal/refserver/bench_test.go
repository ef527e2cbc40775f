package refserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

const benchElems = 1024

func BenchmarkInferIdentityHTTP(b *testing.B) {
	s := startServer(b, Options{Models: []string{"identity_fp32"}})
	header := []byte(`{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,` + strconv.Itoa(benchElems) +
		`],"parameters":{"binary_data_size":` + strconv.Itoa(4*benchElems) + `}}],"parameters":{"binary_data_output":true}}`)
	body := kservev2.EncodeBinaryBody(header, make([]byte, 4*benchElems))
	url := "http://" + s.HTTPAddr() + "/v2/models/identity_fp32/infer"
	// Go's transport asks for gzip by default; the server would honour it.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set(kservev2.HeaderContentLength, strconv.Itoa(len(header)))
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func BenchmarkInferIdentityGRPC(b *testing.B) {
	s := startServer(b, Options{Models: []string{"identity_fp32"}})
	c := grpcClient(b, s)
	req := &inferencepb.ModelInferRequest{
		ModelName:        "identity_fp32",
		Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, benchElems}}},
		RawInputContents: [][]byte{make([]byte, 4*benchElems)},
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.ModelInfer(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

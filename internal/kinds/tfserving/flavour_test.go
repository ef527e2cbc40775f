package tfserving

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
)

// The flavour's REST API answers as TF Serving's does: its status and
// metadata JSON, its error shape and HTTP statuses, both predict formats,
// and its Prometheus metrics.
func TestFlavourREST(t *testing.T) {
	_, rest := flavourOn(t, map[string]map[string]string{"identity_int32": {"error_rate": "1"}, "identity_bytes": {"drop_rate": "1"}})
	base := "http://" + rest
	do := func(method, path, body string) (int, string, error) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	cases := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/v1/models/simple", "", 200, `"state": "AVAILABLE"`},
		{"GET", "/v1/models/simple/versions/1", "", 200, `"version": "1"`},
		{"GET", "/v1/models/simple/metadata", "", 200, `"signature_def": {`},
		{"GET", "/v1/models/simple/metadata", "", 200, `"size": "-1"`},
		{"GET", "/v1/models/nosuch", "", 404, `{"error":"Could not find any versions of model nosuch"}`},
		{"GET", "/v1/models/accumulate", "", 404, "Could not find any versions of model accumulate"},
		{"GET", "/v1/models/simple/versions/9", "", 404, "Servable not found for request: Specific(simple, 9)"},
		{"GET", "/v1/nonsense", "", 400, `{"error":"Malformed request: GET /v1/nonsense"}`},
		{"GET", "/v2", "", 404, "404 page not found"},
		{"POST", "/v1/models/identity_fp32:predict", `{"instances": [[1.5, NaN]]}`, 200, `{"predictions":[[1.5,NaN]]}`},
		{"POST", "/v1/models/identity_fp32:predict", `{"inputs": [[1, 2]]}`, 200, `{"outputs":[[1,2]]}`},
		{"POST", "/v1/models/identity_fp32:predict", `{"signature_name": "x", "inputs": [[1]]}`, 400, `Serving signature name: \"x\" not found`},
		{"POST", "/v1/models/identity_fp32:predict", `{"instances": [1], "inputs": [1]}`, 400, "not allowed to mix"},
		{"POST", "/v1/models/identity_fp32:predict", `{"inputs": [[1, "a"]]}`, 400, "a string where a number"},
		{"POST", "/v1/models/identity_fp32:classify", `{}`, 501, "predict only"},
		{"POST", "/v1/models/identity_int32:predict", `{"inputs": [[1]]}`, 500, `"error"`},
		{"POST", "/v1/models/simple:predict", `{"inputs": {"INPUT0": [[1]], "INPUT1": [[1]]}}`, 400, `"error"`},
	}
	for _, c := range cases {
		code, body, err := do(c.method, c.path, c.body)
		if err != nil {
			t.Errorf("%s %s: %v", c.method, c.path, err)
			continue
		}
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s %s %s: %d %s\nwant %d with %s", c.method, c.path, c.body, code, body, c.code, c.want)
		}
	}
	// drop_rate 1: the connection closes without an answer.
	if _, _, err := do("POST", "/v1/models/identity_bytes:predict", `{"inputs": [["a"]]}`); err == nil {
		t.Error("a dropped request was answered")
	}
	code, body, err := do("GET", promPath, "")
	if err != nil || code != 200 {
		t.Fatalf("metrics: %d %v", code, err)
	}
	for _, want := range []string{
		`:tensorflow:serving:request_count{model_name="identity_fp32",status="OK"} 2`,
		`:tensorflow:serving:request_count{model_name="identity_int32",status="INTERNAL"} 1`,
		`:tensorflow:serving:request_latency_count{model_name="identity_fp32",API="predict",entrypoint="REST"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
}

// The flavour's gRPC services refuse what TF Serving refuses, with its
// codes.
func TestFlavourGRPC(t *testing.T) {
	addr, _ := flavourOn(t, nil)
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pred := pb.NewPredictionServiceClient(cc)
	one := &pb.TensorProto{Dtype: pb.DataType_DT_FLOAT, TensorShape: shapeProto([]int64{1, 1}), FloatVal: []float32{1}}
	cases := []struct {
		req  *pb.PredictRequest
		code codes.Code
	}{
		{&pb.PredictRequest{}, codes.InvalidArgument},
		{&pb.PredictRequest{ModelSpec: &pb.ModelSpec{Name: "nosuch"}}, codes.NotFound},
		{&pb.PredictRequest{ModelSpec: &pb.ModelSpec{Name: "delay", VersionChoice: &pb.ModelSpec_VersionLabel{VersionLabel: "stable"}}}, codes.InvalidArgument},
		{&pb.PredictRequest{ModelSpec: &pb.ModelSpec{Name: "delay", SignatureName: "nope"}, Inputs: map[string]*pb.TensorProto{"INPUT0": one}}, codes.FailedPrecondition},
		{&pb.PredictRequest{ModelSpec: &pb.ModelSpec{Name: "delay"}, Inputs: map[string]*pb.TensorProto{"X": one}}, codes.InvalidArgument},
		{&pb.PredictRequest{ModelSpec: &pb.ModelSpec{Name: "delay"}, Inputs: map[string]*pb.TensorProto{"INPUT0": one}, OutputFilter: []string{"Y"}}, codes.InvalidArgument},
		{&pb.PredictRequest{ModelSpec: &pb.ModelSpec{Name: "delay"}, Inputs: map[string]*pb.TensorProto{"INPUT0": one}}, codes.OK},
	}
	for _, c := range cases {
		resp, err := pred.Predict(ctx, c.req)
		if status.Code(err) != c.code {
			t.Errorf("%v: %v, want %s", c.req, err, c.code)
		}
		if err == nil && (resp.GetModelSpec().GetVersion().GetValue() != 1 || resp.GetOutputs()["OUTPUT0"].GetFloatVal()[0] != 1) {
			t.Errorf("reply %v", resp)
		}
	}
	if _, err := pred.GetModelMetadata(ctx, &pb.GetModelMetadataRequest{ModelSpec: &pb.ModelSpec{Name: "delay"}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("metadata without fields: %v", err)
	}
	st, err := pb.NewModelServiceClient(cc).GetModelStatus(ctx, &pb.GetModelStatusRequest{ModelSpec: &pb.ModelSpec{Name: "mlp_reference"}})
	if err != nil || st.GetModelVersionStatus()[0].GetState() != pb.ModelVersionStatus_AVAILABLE {
		t.Errorf("status %v %v", st, err)
	}
}

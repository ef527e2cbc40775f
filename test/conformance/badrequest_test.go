package conformance

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
)

func TestBadRequests(t *testing.T) {
	good := func() []client.Input {
		return []client.Input{
			input("INPUT0", tensor.INT32, []int64{1, 16}, i32(make([]int32, 16)...)),
			input("INPUT1", tensor.INT32, []int64{1, 16}, i32(make([]int32, 16)...)),
		}
	}
	with := func(f func([]client.Input) []client.Input) []client.Input { return f(good()) }
	cases := []struct {
		name      string
		req       client.InferRequest
		setup     func(t *testing.T, c client.Client)
		httpCode  int
		grpcCode  codes.Code
		substring string
	}{
		{name: "unknown model", req: client.InferRequest{Model: "nope", Inputs: good()},
			httpCode: 404, grpcCode: codes.NotFound, substring: "Request for unknown model: 'nope' is not found"},
		{name: "unknown version", req: client.InferRequest{Model: "simple", Version: "3", Inputs: good()},
			httpCode: 404, grpcCode: codes.NotFound, substring: "version 3 is not found"},
		{name: "wrong shape", req: client.InferRequest{Model: "simple", Inputs: with(func(in []client.Input) []client.Input {
			in[0].Shape, in[0].Raw = []int64{1, 8}, i32(make([]int32, 8)...)
			return in
		})}, httpCode: 400, grpcCode: codes.InvalidArgument, substring: "unexpected shape for input 'INPUT0'"},
		{name: "batch too large", req: client.InferRequest{Model: "simple", Inputs: with(func(in []client.Input) []client.Input {
			for i := range in {
				in[i].Shape, in[i].Raw = []int64{9, 16}, i32(make([]int32, 9*16)...)
			}
			return in
		})}, httpCode: 400, grpcCode: codes.InvalidArgument, substring: "batch-size must be <= 8"},
		{name: "wrong datatype", req: client.InferRequest{Model: "simple", Inputs: with(func(in []client.Input) []client.Input {
			in[1].DataType = tensor.FP32
			return in
		})}, httpCode: 400, grpcCode: codes.InvalidArgument, substring: "data-type is 'FP32', but model 'simple' expects 'INT32'"},
		{name: "unknown input", req: client.InferRequest{Model: "simple", Inputs: with(func(in []client.Input) []client.Input {
			in[1].Name = "INPUT9"
			return in
		})}, httpCode: 400, grpcCode: codes.InvalidArgument, substring: "unexpected inference input 'INPUT9'"},
		{name: "missing input", req: client.InferRequest{Model: "simple", Inputs: good()[:1]},
			httpCode: 400, grpcCode: codes.InvalidArgument, substring: "missing required input(s) ['INPUT1']"},
		{name: "unknown output", req: client.InferRequest{Model: "simple", Inputs: good(), Outputs: []client.RequestedOutput{{Name: "OUTPUT7"}}},
			httpCode: 400, grpcCode: codes.InvalidArgument, substring: "unexpected inference output 'OUTPUT7'"},
		{name: "unregistered shm region", req: client.InferRequest{Model: "simple", Inputs: with(func(in []client.Input) []client.Input {
			in[0].Raw, in[0].Shm = nil, &client.ShmRef{Region: "ghost", ByteSize: 64}
			return in
		})}, httpCode: 400, grpcCode: codes.InvalidArgument, substring: "Unable to find shared memory region: 'ghost'"},
	}
	for _, k := range transports {
		s := start(t, refserver.Options{Models: []string{"simple"}})
		c, infer := connect(t, s, k)
		proto := k.proto
		for _, tc := range cases {
			t.Run(k.String()+"/"+tc.name, func(t *testing.T) {
				_, err := infer(ctxT(t), &tc.req)
				var se *transport.ServerError
				if !errors.As(err, &se) {
					t.Fatalf("want a server error, got %v", err)
				}
				if (proto == "http" && se.HTTPStatus != tc.httpCode) || (proto == "grpc" && se.GRPCCode != tc.grpcCode) {
					t.Errorf("code: %v", se)
				}
				if !strings.Contains(se.Message, tc.substring) {
					t.Errorf("message %q does not contain %q", se.Message, tc.substring)
				}
			})
		}
		if k.own {
			continue // registration is not an infer call
		}
		t.Run(proto+"/shm registration", func(t *testing.T) {
			ctx := ctxT(t)
			err := c.RegisterSystemSharedMemory(ctx, "r", "/perfscen_conformance_no_such_object", 0, 64)
			var se *transport.ServerError
			if !errors.As(err, &se) || (proto == "http" && se.HTTPStatus != 400) || (proto == "grpc" && se.GRPCCode != codes.InvalidArgument) {
				t.Errorf("missing object: %v", err)
			}
			if _, err := c.SystemSharedMemoryStatus(ctx, "absent"); !errors.As(err, &se) || (proto == "http" && se.HTTPStatus != 404) || (proto == "grpc" && se.GRPCCode != codes.NotFound) {
				t.Errorf("status of absent region: %v", err)
			}
		})
	}
}

// Malformed bodies only exist on HTTP; send them raw.
func TestBadHTTPBodies(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple"}})
	hdr := `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}}]}`
	for _, tc := range []struct {
		name      string
		header    map[string]string
		body      string
		status    int
		substring string
	}{
		{"malformed JSON", nil, `{"inputs":[`, 400, "failed to parse the request JSON"},
		{"truncated binary", map[string]string{kservev2.HeaderContentLength: strconv.Itoa(len(hdr))}, hdr + strings.Repeat("\x00", 100), 400, "binary"},
		{"header length beyond body", map[string]string{kservev2.HeaderContentLength: "9999"}, hdr, 400, "outside body length"},
		{"binary without header", nil, hdr, 400, "Infer-Header-Content-Length"},
		{"data and binary", map[string]string{kservev2.HeaderContentLength: "10"}, `{"inputs":[{"name":"INPUT0","shape":[1],"datatype":"INT32","data":[1],"parameters":{"binary_data_size":4}}]}`[:10], 400, ""},
		{"reserved parameter", nil, `{"parameters":{"triton_x":1},"inputs":[]}`, 400, "reserved for Triton"},
		{"unknown datatype", nil, `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT33","data":[1]}]}`, 400, "unknown datatype"},
		{"JSON element count", nil, `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[1,2]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[1,2]}]}`, 400, "needs 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := post(t, s, "/v2/models/simple/infer", tc.header, []byte(tc.body))
			if rep.status != tc.status || !strings.Contains(string(rep.body), tc.substring) || !strings.HasPrefix(string(rep.body), `{"error":"`) {
				t.Errorf("got %d %s, want %d containing %q", rep.status, rep.body, tc.status, tc.substring)
			}
		})
	}
}

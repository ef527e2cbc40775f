package tfserving

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/runner/plan"
)

// stubServer is a TF Serving gRPC server whose answers a test sets.
type stubServer struct {
	pb.UnimplementedPredictionServiceServer
	pb.UnimplementedModelServiceServer
	status   func() (*pb.GetModelStatusResponse, error)
	metadata func() (*pb.GetModelMetadataResponse, error) // nil: UNIMPLEMENTED
	predict  func() (*pb.PredictResponse, error)          // nil: UNIMPLEMENTED
}

func (s *stubServer) GetModelStatus(context.Context, *pb.GetModelStatusRequest) (*pb.GetModelStatusResponse, error) {
	return s.status()
}

func (s *stubServer) GetModelMetadata(ctx context.Context, r *pb.GetModelMetadataRequest) (*pb.GetModelMetadataResponse, error) {
	if s.metadata == nil {
		return s.UnimplementedPredictionServiceServer.GetModelMetadata(ctx, r)
	}
	return s.metadata()
}

func (s *stubServer) Predict(ctx context.Context, r *pb.PredictRequest) (*pb.PredictResponse, error) {
	if s.predict == nil {
		return s.UnimplementedPredictionServiceServer.Predict(ctx, r)
	}
	return s.predict()
}

func serveStub(t *testing.T, s *stubServer) string {
	t.Helper()
	return serveStubOf(t, s, true)
}

// serveStubOf serves s's PredictionService, and its ModelService when
// models is true.
func serveStubOf(t *testing.T, s *stubServer, models bool) string {
	t.Helper()
	g := grpc.NewServer()
	pb.RegisterPredictionServiceServer(g, s)
	if models {
		pb.RegisterModelServiceServer(g, s)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

func versions(states ...pb.ModelVersionStatus_State) func() (*pb.GetModelStatusResponse, error) {
	return func() (*pb.GetModelStatusResponse, error) {
		r := &pb.GetModelStatusResponse{}
		for i, st := range states {
			r.ModelVersionStatus = append(r.ModelVersionStatus, &pb.ModelVersionStatus{Version: int64(i + 1), State: st,
				Status: &pb.StatusProto{ErrorCode: pb.Code_OK}})
		}
		return r, nil
	}
}

// A server that cannot serve the model, or fails answering before any
// load, is exit 3, said with what it answered.
func TestOpenServerFailures(t *testing.T) {
	failed := func() (*pb.GetModelStatusResponse, error) {
		return &pb.GetModelStatusResponse{ModelVersionStatus: []*pb.ModelVersionStatus{{Version: 4, State: pb.ModelVersionStatus_END,
			Status: &pb.StatusProto{ErrorCode: pb.Code_NOT_FOUND, ErrorMessage: "SavedModel not found in export directory"}}}}, nil
	}
	internal := func() (*pb.GetModelMetadataResponse, error) { return nil, status.Error(codes.Internal, "disk on fire") }
	cases := []struct {
		name string
		stub *stubServer
		want string
	}{
		{"model failed to load", &stubServer{status: failed}, `model "m" at 127.0.0.1`},
		{"status internal error", &stubServer{status: func() (*pb.GetModelStatusResponse, error) { return nil, status.Error(codes.Internal, "boom") }},
			"status: grpc model status: server returned Internal: boom"},
		{"still loading", &stubServer{status: versions(pb.ModelVersionStatus_LOADING)}, "is not available yet: version 1 LOADING"},
		{"metadata fails", &stubServer{status: versions(pb.ModelVersionStatus_AVAILABLE), metadata: internal}, "metadata: grpc model metadata: server returned Internal: disk on fire"},
		{"metadata without signatures", &stubServer{status: versions(pb.ModelVersionStatus_AVAILABLE),
			metadata: func() (*pb.GetModelMetadataResponse, error) { return &pb.GetModelMetadataResponse{}, nil }}, `malformed reply: the metadata has no "signature_def" entry`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr := serveStub(t, c.stub)
			p := onePlan(plan.Server{URL: addr}, plan.ProtocolGRPC, plan.Model{Name: "m"}, nil)
			// A loading model is waited for until the connect timeout:
			// a short one. The others are answered at once, however
			// busy the machine: a timeout that a loaded runner's first
			// dial cannot beat (500 ms at load 11) would fail them.
			wait := 10 * time.Second
			if c.name == "still loading" {
				wait = 500 * time.Millisecond
			}
			_, err := Kind{}.Open(context.Background(), p, kinds.Env{ConnectTimeout: wait})
			if failure.KindOf(err) != failure.Environment || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v (%s), want environment naming %q", err, failure.KindOf(err), c.want)
			}
			if testing.Verbose() {
				t.Log(err)
			}
		})
	}
	t.Run("metrics_url unreachable", func(t *testing.T) {
		grpcAddr, _ := flavourOn(t, nil)
		p := onePlan(plan.Server{URL: grpcAddr, MetricsURL: "http://127.0.0.1:1/monitoring/prometheus/metrics"}, plan.ProtocolGRPC, plan.Model{Name: "simple"}, nil)
		_, err := open(t, p)
		if failure.KindOf(err) != failure.Environment || !strings.Contains(err.Error(), "server.metrics_url: scraping") {
			t.Fatalf("err = %v", err)
		}
	})
	// TF Serving's status API ignores version labels (it lists every
	// version); its metadata call refuses an unknown one. That is the
	// scenario's mistake: exit 2 before any load (exit 3 before).
	t.Run("unknown label, status ignores it", func(t *testing.T) {
		addr := serveStub(t, &stubServer{status: versions(pb.ModelVersionStatus_AVAILABLE),
			metadata: func() (*pb.GetModelMetadataResponse, error) {
				return nil, status.Error(codes.InvalidArgument, "Unrecognized servable version label: canary")
			}})
		p := onePlan(plan.Server{URL: addr}, plan.ProtocolGRPC, plan.Model{Name: "m", Version: "canary"}, nil)
		_, err := Kind{}.Open(context.Background(), p, kinds.Env{ConnectTimeout: 10 * time.Second})
		if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), `the server has no version labelled "canary"`) {
			t.Fatalf("err = %v (%s)", err, failure.KindOf(err))
		}
	})
	// A metrics_url answering 404 is a page the server does not have,
	// exit 2 as docs/scenario.md says of any page that is not Prometheus
	// text; only one that does not answer is exit 3.
	t.Run("metrics_url answering 404", func(t *testing.T) {
		grpcAddr, _ := flavourOn(t, nil)
		srv := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(srv.Close)
		p := onePlan(plan.Server{URL: grpcAddr, MetricsURL: srv.URL + "/monitoring/prometheus/metrics"}, plan.ProtocolGRPC, plan.Model{Name: "simple"}, nil)
		_, err := open(t, p)
		if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), "TF Serving answers 404 there unless it was started with --monitoring_config_file") {
			t.Fatalf("err = %v, want the hint", err)
		}
	})
	t.Run("one version up of several", func(t *testing.T) {
		v, _ := judgeStatus(must(versions(pb.ModelVersionStatus_END, pb.ModelVersionStatus_AVAILABLE)()))
		if v != statusAvailable {
			t.Errorf("verdict %v", v)
		}
		if v, d := judgeStatus(&pb.GetModelStatusResponse{}); v != statusDown || d != "no versions listed" {
			t.Errorf("empty: %v %s", v, d)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A gRPC server with PredictionService but no ModelService (a proxy in
// front of TF Serving) is measured without the status check, and says so.
func TestNoModelService(t *testing.T) {
	g := grpc.NewServer()
	core := flavourCore(t)
	f := &frontend{core: core, met: newFlavourMetrics()}
	pb.RegisterPredictionServiceServer(g, &predictionService{f: f})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	s, err := open(t, onePlan(plan.Server{URL: lis.Addr().String()}, plan.ProtocolGRPC, plan.Model{Name: "simple"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Join(s.Notes(), "\n"); !strings.Contains(n, "has no tensorflow.serving.ModelService: model status was not checked") {
		t.Errorf("notes: %s", n)
	}
	// A model it lacks is named as such, not as a server that is not TF
	// Serving ("implements neither ModelService nor PredictionService"
	// before).
	_, err = open(t, onePlan(plan.Server{URL: lis.Addr().String()}, plan.ProtocolGRPC, plan.Model{Name: "nosuch"}, nil))
	if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), `model "nosuch" is not served by the gRPC server at`) {
		t.Errorf("err = %v", err)
	}
}

// Without ModelService, the metadata call says what the status call would
// have, and its own answer is quoted: a label the server lacks is exit 2,
// a failure of the metadata call exit 3, and a proxy that forwards Predict
// alone is named as such. Each said before that the server "implements
// neither ModelService nor PredictionService", quoting the status call.
func TestNoModelServiceAnswers(t *testing.T) {
	invalid := func(msg string) func() (*pb.GetModelMetadataResponse, error) {
		return func() (*pb.GetModelMetadataResponse, error) { return nil, status.Error(codes.InvalidArgument, msg) }
	}
	for _, c := range []struct {
		name    string
		stub    *stubServer
		version string
		kind    failure.Kind
		want    string
	}{
		{"unknown label", &stubServer{metadata: invalid("Unrecognized servable version label: canary")}, "canary", failure.InvalidInput,
			`model "m" version canary at %s: the server has no version labelled "canary" (labels come from its model config's version_labels; it has no tensorflow.serving.ModelService, its PredictionService says: grpc model metadata: server returned InvalidArgument: Unrecognized servable version label: canary)`},
		{"metadata fails", &stubServer{metadata: func() (*pb.GetModelMetadataResponse, error) { return nil, status.Error(codes.Internal, "disk on fire") }}, "", failure.Environment,
			`model "m" at %s: metadata (the server has no tensorflow.serving.ModelService, so its status was not checked): grpc model metadata: server returned Internal: disk on fire`},
		{"a proxy forwarding Predict alone", &stubServer{predict: func() (*pb.PredictResponse, error) { return nil, status.Error(codes.InvalidArgument, "no inputs") }}, "", failure.InvalidInput,
			"server: the gRPC server at %s serves PredictionService/Predict but neither tensorflow.serving.ModelService nor PredictionService/GetModelMetadata"},
		{"neither service", &stubServer{}, "", failure.InvalidInput,
			"server: the gRPC server at %s implements neither tensorflow.serving.ModelService nor PredictionService, so it is not TensorFlow Serving"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := serveStubOf(t, c.stub, false)
			p := onePlan(plan.Server{URL: addr}, plan.ProtocolGRPC, plan.Model{Name: "m", Version: c.version}, nil)
			_, err := Kind{}.Open(context.Background(), p, kinds.Env{ConnectTimeout: 2 * time.Second})
			want := fmt.Sprintf(c.want, addr)
			if failure.KindOf(err) != c.kind || !strings.Contains(fmt.Sprint(err), want) {
				t.Fatalf("err = %v (%s),\nwant %s containing %q", err, failure.KindOf(err), c.kind, want)
			}
		})
	}
}

package tfserving

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/perfscen/perfscen/internal/kinds/embedded"
	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
)

// The embedded flavour serves the reference server's built-in models
// (simple, delay, mlp_*, …: the same models, scheduler, faults and
// --model-param settings as the Triton flavour) through TF Serving's APIs:
// PredictionService (Predict, GetModelMetadata) and ModelService
// (GetModelStatus) over gRPC, the REST API (predict in row and columnar
// format, metadata, status), and TF Serving's Prometheus metrics on the
// REST port. Each model has one signature, serving_default, whose inputs
// and outputs are the model's tensors; a batching model's tensors lead
// with an unknown (-1) batch dimension, as a TF batching model's do.
// Sequence and decoupled models have no TF Serving counterpart and are
// not served.

// Endpoint names of the flavour (perfscen serve --endpoint NAME=addr).
const (
	endpointGRPC = "grpc"
	endpointREST = "rest"
)

// frontend is the flavour's running listeners.
type frontend struct {
	core  *refserver.Server
	grpc  *grpc.Server
	http  *http.Server
	eps   map[string]string
	met   *flavourMetrics
	serve []chan error
}

// ServeFlavour serves core's models through TF Serving's APIs: "grpc"
// (default 127.0.0.1:8500) and "rest" (default 127.0.0.1:8501); "-" turns
// one off.
func (Kind) ServeFlavour(ctx context.Context, core *refserver.Server, addrs map[string]string, listen embedded.Listen) (embedded.Frontend, error) {
	want := map[string]string{endpointGRPC: "127.0.0.1:" + defaultGRPCPort, endpointREST: "127.0.0.1:" + defaultRESTPort}
	for name, addr := range addrs {
		if _, ok := want[name]; !ok {
			return nil, fmt.Errorf("tfserving flavour: unknown endpoint %q (endpoints: grpc, rest)", name)
		}
		want[name] = addr
	}
	if listen == nil {
		var lc net.ListenConfig
		listen = lc.Listen
	}
	f := &frontend{core: core, eps: map[string]string{}, met: newFlavourMetrics()}
	var lns []net.Listener
	fail := func(err error) (embedded.Frontend, error) {
		for _, l := range lns {
			l.Close()
		}
		return nil, err
	}
	for _, name := range []string{endpointGRPC, endpointREST} {
		if want[name] == "-" {
			continue
		}
		l, err := listen(ctx, "tcp", want[name])
		if err != nil {
			return fail(fmt.Errorf("tfserving flavour: %s endpoint: %w", name, err))
		}
		lns = append(lns, l)
		f.eps[name] = l.Addr().String()
		done := make(chan error, 1)
		f.serve = append(f.serve, done)
		if name == endpointGRPC {
			f.grpc = grpc.NewServer(grpc.MaxRecvMsgSize(1<<30), grpc.MaxSendMsgSize(1<<30))
			pb.RegisterPredictionServiceServer(f.grpc, &predictionService{f: f})
			pb.RegisterModelServiceServer(f.grpc, &modelService{f: f})
			go func() { done <- f.grpc.Serve(l) }()
			continue
		}
		f.http = &http.Server{Handler: f.restHandler(), ReadHeaderTimeout: 30 * time.Second}
		go func() { done <- f.http.Serve(l) }()
	}
	if len(f.eps) == 0 {
		return nil, errors.New("tfserving flavour: every endpoint is off")
	}
	return f, nil
}

func (f *frontend) Endpoints() map[string]string { return maps.Clone(f.eps) }

// Close stops both listeners, letting requests in flight finish for a
// few seconds.
func (f *frontend) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	if f.grpc != nil {
		wg.Go(func() {
			stopped := make(chan struct{})
			go func() { f.grpc.GracefulStop(); close(stopped) }()
			select {
			case <-stopped:
			case <-ctx.Done():
				f.grpc.Stop()
				<-stopped
			}
		})
	}
	if f.http != nil {
		wg.Go(func() {
			if err := f.http.Shutdown(ctx); err != nil {
				f.http.Close()
			}
		})
	}
	wg.Wait()
	var errs []error
	for _, done := range f.serve {
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, grpc.ErrServerStopped) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// servable is a built-in model as TF Serving shows it.
type servable struct {
	info    refserver.ModelInfo
	version int64
	sigs    *pb.SignatureDefMap
}

// servableOf looks a model up; sequence and decoupled models are not
// servable here. version is "" (the latest) or the model's version.
func (f *frontend) servableOf(name string, version *int64, label string) (*servable, *apiErr) {
	info, ok := f.core.Model(name)
	if !ok || info.Sequence || info.Decoupled {
		return nil, &apiErr{code: pb.Code_NOT_FOUND, msg: fmt.Sprintf("Servable not found for request: Latest(%s)", name)}
	}
	v, err := strconv.ParseInt(info.Version, 10, 64)
	if err != nil {
		v = 1
	}
	if label != "" {
		return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: fmt.Sprintf("Unrecognized servable version label: %s", label)}
	}
	if version != nil && *version != v {
		return nil, &apiErr{code: pb.Code_NOT_FOUND, msg: fmt.Sprintf("Servable not found for request: Specific(%s, %d)", name, *version)}
	}
	return &servable{info: info, version: v, sigs: signaturesOf(info)}, nil
}

// signaturesOf is a built-in model's one signature, serving_default.
func signaturesOf(info refserver.ModelInfo) *pb.SignatureDefMap {
	conv := func(ts []refserver.TensorInfo) map[string]*pb.TensorInfo {
		out := make(map[string]*pb.TensorInfo, len(ts))
		for _, t := range ts {
			shape := t.Dims
			if info.MaxBatchSize > 0 {
				shape = append([]int64{-1}, t.Dims...)
			}
			dt, _ := toTF(t.DataType)
			out[t.Name] = &pb.TensorInfo{Encoding: &pb.TensorInfo_Name{Name: t.Name + ":0"}, Dtype: dt, TensorShape: shapeProto(shape)}
		}
		return out
	}
	def := &pb.SignatureDef{Inputs: conv(info.Inputs), Outputs: conv(info.Outputs), MethodName: "tensorflow/serving/predict"}
	return &pb.SignatureDefMap{SignatureDef: map[string]*pb.SignatureDef{defaultSignature: def}}
}

// apiErr is a failure with TF Serving's error code.
type apiErr struct {
	code pb.Code
	msg  string
	drop bool // fault injection: answer nothing
}

func (e *apiErr) Error() string { return e.msg }

// coreErr maps a core failure onto TF Serving's codes.
func coreErr(err error) *apiErr {
	e := &apiErr{msg: err.Error(), drop: refserver.Dropped(err)}
	switch refserver.CodeOf(err) {
	case refserver.InvalidArgument:
		e.code = pb.Code_INVALID_ARGUMENT
	case refserver.NotFound:
		e.code = pb.Code_NOT_FOUND
	case refserver.Unavailable:
		e.code = pb.Code_UNAVAILABLE
	case refserver.Unsupported:
		e.code = pb.Code_UNIMPLEMENTED
	case refserver.Cancelled:
		e.code = pb.Code_CANCELLED
	default:
		e.code = pb.Code_INTERNAL
	}
	return e
}

// predict runs one request through the core: the signature's inputs by
// alias, the outputs asked for (all when filter is empty).
func (f *frontend) predict(ctx context.Context, s *servable, signature string, inputs []tensor.Tensor, filter []string) ([]tensor.Tensor, *apiErr) {
	if signature == "" {
		signature = defaultSignature
	}
	def, ok := s.sigs.GetSignatureDef()[signature]
	if !ok {
		return nil, &apiErr{code: pb.Code_FAILED_PRECONDITION, msg: fmt.Sprintf("Serving signature name: %q not found in signature def", signature)}
	}
	seen := map[string]bool{}
	for _, t := range inputs {
		if _, ok := def.GetInputs()[t.Name]; !ok || seen[t.Name] {
			return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: fmt.Sprintf("input tensor alias not found in signature: %s. Inputs expected to be in the set {%s}.", t.Name, aliasList(def.GetInputs()))}
		}
		seen[t.Name] = true
	}
	if len(seen) != len(def.GetInputs()) {
		return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: fmt.Sprintf("input size does not match signature: %d!=%d; the signature takes {%s}", len(seen), len(def.GetInputs()), aliasList(def.GetInputs()))}
	}
	for _, name := range filter {
		if _, ok := def.GetOutputs()[name]; !ok {
			return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: fmt.Sprintf("output tensor alias not found in signature: %s Outputs expected to be in the set {%s}.", name, aliasList(def.GetOutputs()))}
		}
	}
	var outs []string
	if len(filter) > 0 {
		outs = filter
	}
	resp, err := f.core.Infer(ctx, &refserver.Request{Model: s.info.Name, Inputs: inputs, Outputs: outs})
	if err != nil {
		return nil, coreErr(err)
	}
	return resp.Outputs, nil
}

func aliasList(m map[string]*pb.TensorInfo) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}

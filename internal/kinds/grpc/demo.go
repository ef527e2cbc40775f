package grpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds/embedded"
	"github.com/perfscen/perfscen/internal/kinds/grpc/demopb"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
)

// The embedded server of kind grpc is a demo service of our own
// (demopb/perfscen/demo/v1/demo.proto) with server reflection, whose
// methods run the reference server's built-in models: service time,
// batching and injected faults follow the model parameters, as for every
// kind's embedded server.

// DemoService is the demo service's full name.
const DemoService = "perfscen.demo.v1.Demo"

// defaultDemoAddr is where perfscen serve --flavor grpc listens without
// --endpoint: 50051, the port of gRPC's own examples.
const defaultDemoAddr = "127.0.0.1:50051"

// maxGenerate bounds one Generate call's replies.
const maxGenerate = 10000

// demo implements demopb.DemoServer over the core.
type demo struct {
	demopb.UnimplementedDemoServer
	core *refserver.Server
}

func (d *demo) Predict(ctx context.Context, r *demopb.PredictRequest) (*demopb.PredictResponse, error) {
	return d.predict(ctx, r, 0)
}

func (d *demo) Add(ctx context.Context, r *demopb.AddRequest) (*demopb.AddResponse, error) {
	in := func(name string, v []int32) tensor.Tensor {
		return tensor.Tensor{Name: name, DataType: tensor.INT32, Shape: []int64{1, int64(len(v))}, Raw: tensor.EncodeInt32s(v)}
	}
	resp, err := d.core.Infer(ctx, &refserver.Request{Model: "simple", Inputs: []tensor.Tensor{in("INPUT0", r.GetA()), in("INPUT1", r.GetB())}})
	if err != nil {
		return nil, coreStatus(ctx, err)
	}
	sum, _ := tensor.DecodeInt32s(resp.Outputs[0].Raw)
	diff, _ := tensor.DecodeInt32s(resp.Outputs[1].Raw)
	return &demopb.AddResponse{Sum: sum, Difference: diff}, nil
}

func (d *demo) Generate(r *demopb.GenerateRequest, st grpc.ServerStreamingServer[demopb.PredictResponse]) error {
	n := max(r.GetCount(), 1)
	if n > maxGenerate {
		return status.Errorf(codes.InvalidArgument, "count %d: at most %d replies a call", n, maxGenerate)
	}
	req := r.GetRequest()
	if req == nil {
		req = &demopb.PredictRequest{}
	}
	for i := range n {
		resp, err := d.predict(st.Context(), req, i)
		if err != nil {
			return err
		}
		if err := st.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

func (d *demo) Session(st grpc.BidiStreamingServer[demopb.PredictRequest, demopb.PredictResponse]) error {
	for i := uint32(0); ; i++ {
		req, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		resp, err := d.predict(st.Context(), req, i)
		if err != nil {
			return err
		}
		if err := st.Send(resp); err != nil {
			return err
		}
	}
}

// predict runs one inference of a model with one FP32 input and output.
func (d *demo) predict(ctx context.Context, r *demopb.PredictRequest, index uint32) (*demopb.PredictResponse, error) {
	model := r.GetModel()
	if model == "" {
		model = "delay"
	}
	info, ok := d.core.Model(model)
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no model %q (Predict serves: %s)", model, strings.Join(d.fp32Models(), ", "))
	}
	if !oneFP32(info) {
		return nil, status.Errorf(codes.InvalidArgument, "model %q does not take one FP32 input (Predict serves: %s; Add serves simple)", model, strings.Join(d.fp32Models(), ", "))
	}
	shape := []int64{int64(len(r.GetValues()))}
	if info.MaxBatchSize > 0 {
		shape = append([]int64{1}, shape...)
	}
	resp, err := d.core.Infer(ctx, &refserver.Request{Model: model,
		Inputs: []tensor.Tensor{{Name: info.Inputs[0].Name, DataType: tensor.FP32, Shape: shape, Raw: tensor.EncodeFloat32s(r.GetValues())}}})
	if err != nil {
		return nil, coreStatus(ctx, err)
	}
	out, _ := tensor.DecodeFloat32s(resp.Outputs[0].Raw)
	return &demopb.PredictResponse{Model: model, Values: out, Index: index}, nil
}

func oneFP32(m refserver.ModelInfo) bool {
	return len(m.Inputs) == 1 && len(m.Outputs) == 1 && m.Inputs[0].DataType == tensor.FP32 &&
		m.Outputs[0].DataType == tensor.FP32 && !m.Sequence && !m.Decoupled
}

func (d *demo) fp32Models() []string {
	var out []string
	for _, m := range d.core.Models() {
		if oneFP32(m) {
			out = append(out, m.Name)
		}
	}
	return out
}

// coreStatus maps a core error onto the status Triton's gRPC front-end
// would send; a request dropped by fault injection is UNAVAILABLE. A call
// whose deadline (grpc-timeout) passed is DEADLINE_EXCEEDED, as gRPC
// servers answer it: the client then reads the same status whichever side
// gave up first.
func coreStatus(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	code := codes.Internal
	switch refserver.CodeOf(err) {
	case refserver.InvalidArgument:
		code = codes.InvalidArgument
	case refserver.NotFound:
		code = codes.NotFound
	case refserver.Unavailable:
		code = codes.Unavailable
	case refserver.Unsupported:
		code = codes.Unimplemented
	case refserver.Cancelled:
		code = codes.Canceled
	}
	return status.Error(code, err.Error())
}

// frontend is the running demo service.
type frontend struct {
	srv  *grpc.Server
	addr string
	done chan struct{}
}

func (f *frontend) Endpoints() map[string]string { return map[string]string{"grpc": f.addr} }

func (f *frontend) Close() error {
	f.srv.Stop()
	<-f.done
	return nil
}

// ServeFlavour serves the demo service over core on addrs["grpc"]
// (default 127.0.0.1:50051), with server reflection.
func (Kind) ServeFlavour(ctx context.Context, core *refserver.Server, addrs map[string]string, listen embedded.Listen) (embedded.Frontend, error) {
	for name := range addrs {
		if name != "grpc" {
			return nil, failure.Invalid(fmt.Errorf("--endpoint %s: the grpc flavour has one endpoint, grpc", name))
		}
	}
	addr := addrs["grpc"]
	switch addr {
	case "":
		addr = defaultDemoAddr
	case "-":
		return nil, failure.Invalid(fmt.Errorf("--endpoint grpc=-: the grpc flavour needs its one endpoint"))
	}
	var ln net.Listener
	var err error
	if listen != nil {
		ln, err = listen(ctx, "tcp", addr)
	} else {
		ln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, failure.Env(fmt.Errorf("grpc demo service: %w", err))
	}
	srv := grpc.NewServer()
	demopb.RegisterDemoServer(srv, &demo{core: core})
	reflection.Register(srv)
	f := &frontend{srv: srv, addr: ln.Addr().String(), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		_ = srv.Serve(ln)
	}()
	return f, nil
}

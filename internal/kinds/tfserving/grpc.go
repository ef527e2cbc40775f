package tfserving

import (
	"context"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	protoenc "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"

	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	kservepb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// grpcAPI is TF Serving's gRPC API: PredictionService and ModelService on
// one connection.
type grpcAPI struct {
	target  string
	cc      *grpc.ClientConn
	pred    pb.PredictionServiceClient
	models  pb.ModelServiceClient
	timeout time.Duration
}

// headerCreds sends the scenario's headers as metadata on every call.
type headerCreds map[string]string

func (h headerCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return h, nil
}

// RequireTransportSecurity is false so plaintext test servers work.
func (h headerCreds) RequireTransportSecurity() bool { return false }

func newGRPC(url string, o connOptions) (*grpcAPI, error) {
	target, tlsScheme, err := splitURL(plan.ProtocolGRPC, url)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if o.TLS != nil || tlsScheme {
		cfg := o.TLS
		if cfg == nil {
			cfg = &tls12
		}
		creds = credentials.NewTLS(cfg.Clone())
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		// TF Serving takes messages up to INT32_MAX; grpc-go's default
		// 4 MiB would cut large tensors short.
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32), grpc.MaxCallSendMsgSize(math.MaxInt32)),
		// Fixed windows: no bandwidth-estimation pings per request.
		grpc.WithInitialWindowSize(4 << 20),
		grpc.WithInitialConnWindowSize(4 << 20),
	}
	dialTarget := target
	if o.Dial != nil {
		dialTarget = "passthrough:///" + target
		dial := o.Dial
		opts = append(opts, grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dial(ctx, "tcp", addr)
		}))
	}
	if len(o.Headers) > 0 {
		md := headerCreds{}
		for k, v := range o.Headers {
			md[strings.ToLower(k)] = v // gRPC metadata keys are lowercase
		}
		opts = append(opts, grpc.WithPerRPCCredentials(md))
	}
	cc, err := grpc.NewClient(dialTarget, opts...)
	if err != nil {
		return nil, fmt.Errorf("grpc client: %w", err)
	}
	return &grpcAPI{target: target, cc: cc, pred: pb.NewPredictionServiceClient(cc), models: pb.NewModelServiceClient(cc), timeout: o.Timeout}, nil
}

func (g *grpcAPI) close() error { return g.cc.Close() }

func (g *grpcAPI) status(ctx context.Context, m modelRef) (*pb.GetModelStatusResponse, error) {
	ctx, cancel := withTimeout(ctx, g.timeout)
	defer cancel()
	spec := m.spec()
	spec.SignatureName = ""
	resp, err := g.models.GetModelStatus(ctx, &pb.GetModelStatusRequest{ModelSpec: spec})
	if err != nil {
		return nil, grpcError(ctx, "model status", err)
	}
	return resp, nil
}

func (g *grpcAPI) signatures(ctx context.Context, m modelRef) (*pb.SignatureDefMap, error) {
	ctx, cancel := withTimeout(ctx, g.timeout)
	defer cancel()
	spec := m.spec()
	spec.SignatureName = ""
	resp, err := g.pred.GetModelMetadata(ctx, &pb.GetModelMetadataRequest{ModelSpec: spec, MetadataField: []string{signatureKey}})
	if err != nil {
		return nil, grpcError(ctx, "model metadata", err)
	}
	sigs, err := signaturesFromGRPC(resp)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolGRPC, Op: "model metadata", Err: err}
	}
	return sigs, nil
}

// identify asks the KServe v2 question: Triton's gRPC port answers
// ServerMetadata where TF Serving's answers UNIMPLEMENTED.
func (g *grpcAPI) identify(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	md, err := kservepb.NewGRPCInferenceServiceClient(g.cc).ServerMetadata(ctx, &kservepb.ServerMetadataRequest{})
	if err != nil {
		return ""
	}
	return fmt.Sprintf("a KServe v2 gRPC endpoint (%s %s)", md.GetName(), md.GetVersion())
}

// predict sends one Predict and times it: wait is the time spent neither
// building the call nor (un)marshalling, i.e. on the wire and in the
// server.
func (g *grpcAPI) predict(ctx context.Context, req *pb.PredictRequest) (*pb.PredictResponse, time.Duration, error) {
	start := time.Now()
	ctx, cancel := withTimeout(ctx, g.timeout)
	defer cancel()
	codec := codecPool.Get().(*timedCodec)
	codec.marshal, codec.unmarshal = 0, 0
	resp, err := g.pred.Predict(ctx, req, grpc.ForceCodecV2(codec))
	called := time.Since(start)
	cpu := codec.marshal + codec.unmarshal
	codecPool.Put(codec)
	if err != nil {
		return nil, 0, grpcError(ctx, "predict", err)
	}
	return resp, max(called-cpu, 0), nil
}

// timedCodec is the proto codec, recording how long one call spent
// marshalling and unmarshalling: the client's CPU share of the call.
type timedCodec struct {
	marshal, unmarshal time.Duration
}

var protoCodec = encoding.GetCodecV2(protoenc.Name)

var codecPool = sync.Pool{New: func() any { return &timedCodec{} }}

func (c *timedCodec) Marshal(v any) (mem.BufferSlice, error) {
	t := time.Now()
	out, err := protoCodec.Marshal(v)
	c.marshal += time.Since(t)
	return out, err
}

func (c *timedCodec) Unmarshal(data mem.BufferSlice, v any) error {
	t := time.Now()
	err := protoCodec.Unmarshal(data, v)
	c.unmarshal += time.Since(t)
	return err
}

// Name keeps the standard content-subtype so servers see plain protobuf.
func (c *timedCodec) Name() string { return protoenc.Name }

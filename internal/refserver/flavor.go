package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

// Flavor is the kind of server the reference server imitates. Clients meet
// both in the field: Triton with its extensions, and plain KServe v2 servers
// (MLServer, KServe's own runtimes) that only speak the core protocol.
type Flavor string

const (
	// FlavorTriton serves KServe v2 with Triton's extensions (the default).
	FlavorTriton Flavor = "triton"
	// FlavorKServe serves the core KServe v2 protocol only: server metadata
	// lists no extension, HTTP tensors travel as JSON (FP16 and BF16
	// included), and the model configuration, statistics, repository and
	// shared-memory endpoints do not exist.
	FlavorKServe Flavor = "kserve"
)

// Flavors lists the accepted flavours, default first.
func Flavors() []Flavor { return []Flavor{FlavorTriton, FlavorKServe} }

// ParseFlavor accepts a flavour name; "" is the default (triton).
func ParseFlavor(s string) (Flavor, error) {
	switch Flavor(s) {
	case "", FlavorTriton:
		return FlavorTriton, nil
	case FlavorKServe:
		return FlavorKServe, nil
	}
	valid := make([]string, 0, 2)
	for _, f := range Flavors() {
		valid = append(valid, string(f))
	}
	return "", fmt.Errorf("unknown server flavour %q (valid: %s)", s, strings.Join(valid, ", "))
}

// KServeServerName is what the plain flavour reports as its name.
const KServeServerName = "perfscen-kserve"

func (s *Server) plain() bool { return s.opts.Flavor == FlavorKServe }

// plainHTTP keeps only the core KServe v2 REST API in front of the full
// handler: server metadata without extensions, health, model metadata and
// readiness, and inference with JSON tensors. Everything else is unknown,
// as on a server that never had the extension.
func (s *Server) plainHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seg := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		if len(seg) == 0 || seg[0] != "v2" {
			notFound(w)
			return
		}
		seg = seg[1:]
		switch {
		case len(seg) == 0:
			s.onlyGET(w, r, func(w http.ResponseWriter, _ *http.Request) {
				writeJSON(w, http.StatusOK, kservev2.ServerMetadata{Name: KServeServerName, Version: s.version, Extensions: []string{}})
			})
		case seg[0] == "health":
			next.ServeHTTP(w, r)
		case seg[0] == "models" && plainModelPath(seg[1:]):
			if seg[len(seg)-1] == "infer" {
				if err := checkPlainInfer(r); err != nil {
					writeError(w, err)
					return
				}
			}
			next.ServeHTTP(w, r)
		default:
			notFound(w)
		}
	})
}

// plainModelPath accepts {m}, {m}/ready, {m}/infer, with an optional
// versions/{v} after the model name.
func plainModelPath(seg []string) bool {
	if len(seg) == 0 || seg[0] == "" || seg[0] == "stats" {
		return false
	}
	rest := seg[1:]
	if len(rest) >= 2 && rest[0] == "versions" {
		rest = rest[2:]
	}
	switch len(rest) {
	case 0:
		return true
	case 1:
		return rest[0] == "ready" || rest[0] == "infer"
	}
	return false
}

// checkPlainInfer refuses what a server without Triton's binary tensor and
// shared-memory extensions cannot read. The body is put back for the
// handler that follows.
func checkPlainInfer(r *http.Request) error {
	if r.Header.Get(kservev2.HeaderContentLength) != "" {
		return errorf(codeInvalidArg, "%s: the binary tensor data extension is not supported", kservev2.HeaderContentLength)
	}
	if r.Header.Get("Content-Encoding") != "" {
		return errorf(codeInvalidArg, "Content-Encoding %q is not supported", r.Header.Get("Content-Encoding"))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPlainBody))
	r.Body.Close()
	if err != nil {
		return errorf(codeInvalidArg, "reading request body: %v", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req kservev2.InferRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil // the handler reports malformed JSON as it always does
	}
	if _, ok := req.Parameters[kservev2.ParamBinaryDataOutput]; ok {
		return errorf(codeInvalidArg, "parameter '%s': the binary tensor data extension is not supported", kservev2.ParamBinaryDataOutput)
	}
	for _, in := range req.Inputs {
		if err := plainTensorParams("input", in.Name, in.Parameters); err != nil {
			return err
		}
	}
	for _, o := range req.Outputs {
		if err := plainTensorParams("output", o.Name, o.Parameters); err != nil {
			return err
		}
	}
	return nil
}

// maxPlainBody bounds the copy a plain-flavour infer body is read into.
const maxPlainBody = 1 << 30

func plainTensorParams(kind, name string, p kservev2.Parameters) error {
	for _, k := range []string{kservev2.ParamBinaryDataSize, kservev2.ParamBinaryData} {
		if _, ok := p[k]; ok {
			return errorf(codeInvalidArg, "%s '%s': parameter '%s': the binary tensor data extension is not supported", kind, name, k)
		}
	}
	if _, ok := p[kservev2.ParamShmRegion]; ok {
		return errorf(codeInvalidArg, "%s '%s': parameter '%s': shared memory is not supported", kind, name, kservev2.ParamShmRegion)
	}
	if _, ok := p[kservev2.ParamClassification]; ok {
		return errorf(codeInvalidArg, "%s '%s': parameter '%s': the classification extension is not supported", kind, name, kservev2.ParamClassification)
	}
	return nil
}

// plainGRPCMethods are the core KServe v2 gRPC calls.
var plainGRPCMethods = map[string]bool{
	"ServerLive": true, "ServerReady": true, "ModelReady": true,
	"ServerMetadata": true, "ModelMetadata": true, "ModelInfer": true,
}

// grpcFlavorOptions returns interceptors that keep a plain-flavour gRPC
// service to the core API; nil for Triton.
func (s *Server) grpcFlavorOptions() []grpc.ServerOption {
	if !s.plain() {
		return nil
	}
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		method := info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:]
		if !strings.HasPrefix(info.FullMethod, "/inference.GRPCInferenceService/") {
			return h(ctx, req)
		}
		if !plainGRPCMethods[method] {
			return nil, status.Errorf(codes.Unimplemented, "unknown method %s for service inference.GRPCInferenceService", method)
		}
		switch r := req.(type) {
		case *inferencepb.ServerMetadataRequest:
			return &inferencepb.ServerMetadataResponse{Name: KServeServerName, Version: s.version, Extensions: []string{}}, nil
		case *inferencepb.ModelInferRequest:
			if err := plainGRPCInfer(r); err != nil {
				return nil, err
			}
		}
		return h(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if strings.HasPrefix(info.FullMethod, "/inference.GRPCInferenceService/") {
			// ModelStreamInfer is Triton's; the core protocol has no stream.
			method := info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:]
			return status.Errorf(codes.Unimplemented, "unknown method %s for service inference.GRPCInferenceService", method)
		}
		return h(srv, ss)
	}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream)}
}

// plainGRPCInfer refuses shared-memory parameters, which belong to an
// extension the plain flavour does not have.
func plainGRPCInfer(r *inferencepb.ModelInferRequest) error {
	for _, in := range r.GetInputs() {
		if _, ok := in.GetParameters()[kservev2.ParamShmRegion]; ok {
			return status.Errorf(codes.InvalidArgument, "input '%s': shared memory is not supported", in.GetName())
		}
	}
	for _, o := range r.GetOutputs() {
		if _, ok := o.GetParameters()[kservev2.ParamShmRegion]; ok {
			return status.Errorf(codes.InvalidArgument, "output '%s': shared memory is not supported", o.GetName())
		}
		if _, ok := o.GetParameters()[kservev2.ParamClassification]; ok {
			return status.Errorf(codes.InvalidArgument, "output '%s': the classification extension is not supported", o.GetName())
		}
	}
	return nil
}

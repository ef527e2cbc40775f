package tfserving

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/internal/tensor"
)

// predictionService is the flavour's tensorflow.serving.PredictionService.
type predictionService struct {
	pb.UnimplementedPredictionServiceServer
	f *frontend
}

// modelService is the flavour's tensorflow.serving.ModelService.
type modelService struct {
	pb.UnimplementedModelServiceServer
	f *frontend
}

// grpcStatus is e as a gRPC status: TF's error codes are gRPC's.
func grpcStatus(e *apiErr) error {
	return status.Error(codes.Code(e.code), e.msg)
}

// versionOf reads a ModelSpec's version choice.
func versionOf(spec *pb.ModelSpec) (*int64, string) {
	switch v := spec.GetVersionChoice().(type) {
	case *pb.ModelSpec_Version:
		x := v.Version.GetValue()
		return &x, ""
	case *pb.ModelSpec_VersionLabel:
		return nil, v.VersionLabel
	}
	return nil, ""
}

func (s *predictionService) Predict(ctx context.Context, req *pb.PredictRequest) (*pb.PredictResponse, error) {
	start := time.Now()
	name := req.GetModelSpec().GetName()
	resp, e := s.predict(ctx, req)
	s.f.met.record(name, "Predict", "GRPC", e, time.Since(start))
	if e != nil {
		return nil, grpcStatus(e)
	}
	return resp, nil
}

func (s *predictionService) predict(ctx context.Context, req *pb.PredictRequest) (*pb.PredictResponse, *apiErr) {
	spec := req.GetModelSpec()
	if spec.GetName() == "" {
		return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: "Missing ModelSpec"}
	}
	v, label := versionOf(spec)
	sv, e := s.f.servableOf(spec.GetName(), v, label)
	if e != nil {
		return nil, e
	}
	inputs := make([]tensor.Tensor, 0, len(req.GetInputs()))
	for alias, tp := range req.GetInputs() {
		t, err := fromProto(alias, tp)
		if err != nil {
			return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: err.Error()}
		}
		inputs = append(inputs, t)
	}
	outs, e := s.f.predict(ctx, sv, spec.GetSignatureName(), inputs, req.GetOutputFilter())
	if e != nil {
		return nil, e
	}
	resp := &pb.PredictResponse{Outputs: make(map[string]*pb.TensorProto, len(outs)), ModelSpec: &pb.ModelSpec{
		Name: sv.info.Name, VersionChoice: &pb.ModelSpec_Version{Version: wrapperspb.Int64(sv.version)},
		SignatureName: cmpOrDefault(spec.GetSignatureName()),
	}}
	for _, t := range outs {
		tp, err := fieldProto(t)
		if err != nil {
			return nil, &apiErr{code: pb.Code_INTERNAL, msg: err.Error()}
		}
		resp.Outputs[t.Name] = tp
	}
	return resp, nil
}

func cmpOrDefault(sig string) string {
	if sig == "" {
		return defaultSignature
	}
	return sig
}

func (s *predictionService) GetModelMetadata(_ context.Context, req *pb.GetModelMetadataRequest) (*pb.GetModelMetadataResponse, error) {
	resp, e := s.f.metadata(req)
	if e != nil {
		return nil, grpcStatus(e)
	}
	return resp, nil
}

// metadata answers GetModelMetadata; "signature_def" is the one field TF
// Serving supports.
func (f *frontend) metadata(req *pb.GetModelMetadataRequest) (*pb.GetModelMetadataResponse, *apiErr) {
	spec := req.GetModelSpec()
	if spec.GetName() == "" {
		return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: "Missing ModelSpec"}
	}
	if len(req.GetMetadataField()) == 0 {
		return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: "GetModelMetadataRequest must specify at least one metadata_field"}
	}
	for _, m := range req.GetMetadataField() {
		if m != signatureKey {
			return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: "Metadata field " + m + " is not supported"}
		}
	}
	v, label := versionOf(spec)
	sv, e := f.servableOf(spec.GetName(), v, label)
	if e != nil {
		return nil, e
	}
	a, err := anypb.New(sv.sigs)
	if err != nil {
		return nil, &apiErr{code: pb.Code_INTERNAL, msg: err.Error()}
	}
	return &pb.GetModelMetadataResponse{
		ModelSpec: &pb.ModelSpec{Name: sv.info.Name, VersionChoice: &pb.ModelSpec_Version{Version: wrapperspb.Int64(sv.version)}},
		Metadata:  map[string]*anypb.Any{signatureKey: a},
	}, nil
}

func (s *modelService) GetModelStatus(_ context.Context, req *pb.GetModelStatusRequest) (*pb.GetModelStatusResponse, error) {
	resp, e := s.f.status(req.GetModelSpec())
	if e != nil {
		return nil, grpcStatus(e)
	}
	return resp, nil
}

// status answers GetModelStatus: a built-in model is loaded for as long as
// the server runs, so its one version is AVAILABLE.
func (f *frontend) status(spec *pb.ModelSpec) (*pb.GetModelStatusResponse, *apiErr) {
	if spec.GetName() == "" {
		return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: "Missing ModelSpec"}
	}
	v, label := versionOf(spec)
	sv, e := f.servableOf(spec.GetName(), v, label)
	if e != nil {
		if e.code == pb.Code_NOT_FOUND && v == nil {
			e.msg = "Could not find any versions of model " + spec.GetName()
		}
		return nil, e
	}
	return &pb.GetModelStatusResponse{ModelVersionStatus: []*pb.ModelVersionStatus{{
		Version: sv.version, State: pb.ModelVersionStatus_AVAILABLE, Status: &pb.StatusProto{},
	}}}, nil
}

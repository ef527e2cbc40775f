package tfserving

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/perfscen/perfscen/internal/inputdata"
	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/internal/tensor"
)

// signatureKey is GetModelMetadataResponse.metadata's key for the
// SignatureDefMap (GetModelMetadataImpl::kSignatureDef).
const signatureKey = "signature_def"

// sigTensor is one input or output of a signature, by its alias (the key
// requests and replies use).
type sigTensor struct {
	Alias    string
	DataType tensor.DataType
	// Shape is TensorFlow's, -1 for unknown dims.
	Shape []int64
}

// signature is the SignatureDef a run uses.
type signature struct {
	Name            string
	Inputs, Outputs []sigTensor // sorted by alias
}

// unknownMaxBatch stands for "batches, limit not published": a signature
// says a tensor has a leading unknown dimension, not how large it may be.
const unknownMaxBatch = math.MaxInt32

// pickSignature finds name in the model's signatures; a name the model
// lacks is the scenario's mistake, named with the ones it has.
func pickSignature(model string, m *pb.SignatureDefMap, name string) (*signature, error) {
	def, ok := m.GetSignatureDef()[name]
	if !ok {
		names := make([]string, 0, len(m.GetSignatureDef()))
		for k := range m.GetSignatureDef() {
			names = append(names, k)
		}
		slices.Sort(names)
		list := strings.Join(names, ", ")
		if list == "" {
			list = "none"
		}
		return nil, fmt.Errorf("model %q has no signature %q; its signatures: %s", model, name, list)
	}
	sig := &signature{Name: name}
	var err error
	if sig.Inputs, err = sigTensors(def.GetInputs(), "input"); err != nil {
		return nil, fmt.Errorf("model %q signature %q: %w", model, name, err)
	}
	if sig.Outputs, err = sigTensors(def.GetOutputs(), "output"); err != nil {
		return nil, fmt.Errorf("model %q signature %q: %w", model, name, err)
	}
	if len(sig.Inputs) == 0 {
		return nil, fmt.Errorf("model %q signature %q has no inputs", model, name)
	}
	return sig, nil
}

func sigTensors(m map[string]*pb.TensorInfo, what string) ([]sigTensor, error) {
	out := make([]sigTensor, 0, len(m))
	for alias, info := range m {
		dt, err := fromTF(info.GetDtype())
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, alias, err)
		}
		if info.GetCooSparse() != nil {
			return nil, fmt.Errorf("%s %s is a sparse tensor, which perfscen cannot send", what, alias)
		}
		st := sigTensor{Alias: alias, DataType: dt}
		sh := info.GetTensorShape()
		if sh == nil || sh.GetUnknownRank() {
			return nil, fmt.Errorf("%s %s has a shape of unknown rank; perfscen needs its rank to build data", what, alias)
		}
		for _, d := range sh.GetDim() {
			st.Shape = append(st.Shape, d.GetSize())
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b sigTensor) int { return strings.Compare(a.Alias, b.Alias) })
	return out, nil
}

// modelSpec describes the signature to the input-data loader. When every
// tensor's first dimension is unknown (-1), it is taken as the batch
// dimension, as TF Serving's batching models write it, so batch_size and
// shapes mean what they mean for Triton and throughput counts samples.
func (s *signature) modelSpec(model string) inputdata.ModelSpec {
	spec := inputdata.ModelSpec{Name: model}
	batched := true
	for _, group := range [][]sigTensor{s.Inputs, s.Outputs} {
		for _, t := range group {
			if len(t.Shape) == 0 || t.Shape[0] != -1 {
				batched = false
			}
		}
	}
	dims := func(shape []int64) []int64 {
		if batched {
			return slices.Clone(shape[1:])
		}
		return slices.Clone(shape)
	}
	if batched {
		spec.MaxBatchSize = unknownMaxBatch
	}
	for _, t := range s.Inputs {
		spec.Inputs = append(spec.Inputs, inputdata.TensorSpec{Name: t.Alias, DataType: t.DataType, Dims: dims(t.Shape)})
	}
	for _, t := range s.Outputs {
		spec.Outputs = append(spec.Outputs, inputdata.TensorSpec{Name: t.Alias, DataType: t.DataType, Dims: dims(t.Shape)})
	}
	return spec
}

func (s *signature) outputSpecs() []tensorSpec {
	out := make([]tensorSpec, len(s.Outputs))
	for i, t := range s.Outputs {
		out[i] = tensorSpec{Name: t.Alias, DataType: t.DataType}
	}
	return out
}

func (s *signature) inputNames() string {
	names := make([]string, len(s.Inputs))
	for i, t := range s.Inputs {
		names[i] = t.Alias
	}
	return strings.Join(names, ", ")
}

// signaturesFromGRPC unpacks GetModelMetadata's "signature_def" entry.
func signaturesFromGRPC(resp *pb.GetModelMetadataResponse) (*pb.SignatureDefMap, error) {
	a, ok := resp.GetMetadata()[signatureKey]
	if !ok {
		return nil, fmt.Errorf("the metadata has no %q entry", signatureKey)
	}
	m := &pb.SignatureDefMap{}
	if err := a.UnmarshalTo(m); err != nil {
		return nil, fmt.Errorf("metadata %q (%s): %w", signatureKey, a.GetTypeUrl(), err)
	}
	return m, nil
}

// restMetadata is GET /v1/models/NAME/metadata's answer. TF Serving writes
// the model spec and the unpacked SignatureDefMap as separate protobuf
// JSON (proto field names, int64 as strings, no "@type") joined by hand
// (http_rest_api_util.cc ToJsonString), so the whole is no message
// protojson could read at once: each part is read on its own.
type restMetadata struct {
	ModelSpec json.RawMessage            `json:"model_spec"`
	Metadata  map[string]json.RawMessage `json:"metadata"`
}

var lenientJSON = protojson.UnmarshalOptions{DiscardUnknown: true}

// signaturesFromREST reads the metadata answer's model spec and
// signatures.
func signaturesFromREST(body []byte) (*pb.ModelSpec, *pb.SignatureDefMap, error) {
	var md restMetadata
	if err := json.Unmarshal(body, &md); err != nil {
		return nil, nil, fmt.Errorf("metadata is not JSON: %w", err)
	}
	if md.ModelSpec == nil || md.Metadata == nil {
		return nil, nil, errors.New(`metadata lacks "model_spec" or "metadata"`)
	}
	spec := &pb.ModelSpec{}
	if err := lenientJSON.Unmarshal(md.ModelSpec, spec); err != nil {
		return nil, nil, fmt.Errorf("metadata model_spec: %w", err)
	}
	raw, ok := md.Metadata[signatureKey]
	if !ok {
		return nil, nil, fmt.Errorf("metadata has no %q entry", signatureKey)
	}
	m := &pb.SignatureDefMap{}
	if err := lenientJSON.Unmarshal(raw, m); err != nil {
		return nil, nil, fmt.Errorf("metadata %s: %w", signatureKey, err)
	}
	return spec, m, nil
}

// restMetadataJSON writes a metadata answer as TF Serving does: the two
// parts with proto field names and every field printed.
func restMetadataJSON(spec *pb.ModelSpec, m *pb.SignatureDefMap) ([]byte, error) {
	opts := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}
	a, err := opts.Marshal(spec)
	if err != nil {
		return nil, err
	}
	b, err := opts.Marshal(m)
	if err != nil {
		return nil, err
	}
	out := []byte("{\n\"model_spec\":")
	out = append(out, tfIndent(a)...)
	out = append(out, ",\n\"metadata\": {\"signature_def\": "...)
	out = append(out, tfIndent(b)...)
	return append(out, "}\n}\n"...), nil
}

// tfIndent lays protojson's output out as TF Serving's JSON printer does
// (add_whitespace: one space of indent per level, "key": value):
// protojson varies its spacing on purpose, which no client may rely on,
// but a stable form keeps the flavour's answers readable and comparable.
func tfIndent(b []byte) []byte {
	var c, out bytes.Buffer
	if json.Compact(&c, b) != nil || json.Indent(&out, c.Bytes(), "", " ") != nil {
		return b
	}
	return out.Bytes()
}

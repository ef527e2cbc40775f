package tfserving

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/perfscen/perfscen/internal/inputdata"
	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/internal/tensor"
)

// The REST metadata answer in TF Serving's own form (separately printed
// parts, int64 as strings, no "@type"): the model spec and every
// signature are read, and the batch dimension is recognised.
func TestSignaturesFromREST(t *testing.T) {
	b, err := os.ReadFile("testdata/metadata_rest.json")
	if err != nil {
		t.Fatal(err)
	}
	spec, sigs, err := signaturesFromREST(b)
	if err != nil {
		t.Fatal(err)
	}
	if spec.GetName() != "half_plus_two" || spec.GetVersion().GetValue() != 123 {
		t.Errorf("model spec %v", spec)
	}
	sig, err := pickSignature("half_plus_two", sigs, defaultSignature)
	if err != nil {
		t.Fatal(err)
	}
	want := inputdata.ModelSpec{Name: "half_plus_two", MaxBatchSize: unknownMaxBatch,
		Inputs:  []inputdata.TensorSpec{{Name: "x", DataType: tensor.FP32, Dims: []int64{1}}},
		Outputs: []inputdata.TensorSpec{{Name: "y", DataType: tensor.FP32, Dims: []int64{1}}}}
	if got := sig.modelSpec("half_plus_two"); !reflect.DeepEqual(got, want) {
		t.Errorf("spec %+v, want %+v", got, want)
	}
	tok, err := pickSignature("half_plus_two", sigs, "tokens")
	if err != nil {
		t.Fatal(err)
	}
	got := tok.modelSpec("m")
	if got.MaxBatchSize != 0 || len(got.Inputs) != 2 || got.Inputs[0].Name != "mask" || got.Inputs[1].DataType != tensor.BYTES ||
		!reflect.DeepEqual(got.Inputs[1].Dims, []int64{3}) || got.Outputs[0].DataType != tensor.INT64 {
		t.Errorf("tokens spec %+v", got)
	}
	_, err = pickSignature("half_plus_two", sigs, "serving_defualt")
	if err == nil || !strings.Contains(err.Error(), `no signature "serving_defualt"; its signatures: regress_x_to_y, serving_default, tokens`) {
		t.Errorf("err = %v", err)
	}
	if _, err := pickSignature("half_plus_two", sigs, "regress_x_to_y"); err == nil || !strings.Contains(err.Error(), "input inputs has a shape of unknown rank") {
		t.Errorf("unknown rank: err = %v", err)
	}
}

// The gRPC answer packs the signatures in an Any of upstream's type URL.
func TestSignaturesFromGRPC(t *testing.T) {
	m := &pb.SignatureDefMap{SignatureDef: map[string]*pb.SignatureDef{"serving_default": {
		Inputs: map[string]*pb.TensorInfo{"a": {Dtype: pb.DataType_DT_COMPLEX64, TensorShape: &pb.TensorShapeProto{}}},
	}}}
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	if a.TypeUrl != "type.googleapis.com/tensorflow.serving.SignatureDefMap" {
		t.Errorf("type URL %s", a.TypeUrl)
	}
	got, err := signaturesFromGRPC(&pb.GetModelMetadataResponse{Metadata: map[string]*anypb.Any{signatureKey: a}})
	if err != nil || !proto.Equal(got, m) {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := pickSignature("m", got, defaultSignature); err == nil || !strings.Contains(err.Error(), "input a: TensorFlow dtype DT_COMPLEX64 is not supported") {
		t.Errorf("err = %v", err)
	}
	if _, err := signaturesFromGRPC(&pb.GetModelMetadataResponse{}); err == nil {
		t.Error("metadata without signature_def accepted")
	}
	wrong, _ := anypb.New(&pb.ModelSpec{})
	if _, err := signaturesFromGRPC(&pb.GetModelMetadataResponse{Metadata: map[string]*anypb.Any{signatureKey: wrong}}); err == nil {
		t.Error("a ModelSpec taken for signatures")
	}
}

// The flavour's REST metadata reads back as what it wrote.
func TestRESTMetadataRoundTrip(t *testing.T) {
	m := &pb.SignatureDefMap{SignatureDef: map[string]*pb.SignatureDef{"serving_default": {
		Inputs:     map[string]*pb.TensorInfo{"INPUT0": {Encoding: &pb.TensorInfo_Name{Name: "INPUT0:0"}, Dtype: pb.DataType_DT_INT32, TensorShape: shapeProto([]int64{-1, 16})}},
		Outputs:    map[string]*pb.TensorInfo{"OUTPUT0": {Encoding: &pb.TensorInfo_Name{Name: "OUTPUT0:0"}, Dtype: pb.DataType_DT_INT32, TensorShape: shapeProto([]int64{-1, 16})}},
		MethodName: "tensorflow/serving/predict",
	}}}
	spec := (modelRef{Name: "simple", Version: "1"}).spec()
	b, err := restMetadataJSON(spec, m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "@type") || !strings.Contains(string(b), `"tensor_shape"`) {
		t.Errorf("not TF Serving's form: %s", b)
	}
	gotSpec, got, err := signaturesFromREST(b)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, m) || !proto.Equal(gotSpec, spec) {
		t.Errorf("round trip: %v %v", gotSpec, got)
	}
}

func TestSignaturesFromRESTRefused(t *testing.T) {
	for body, want := range map[string]string{
		`{"error": "nope"}`:                  `lacks "model_spec"`,
		`[]`:                                 "not JSON",
		`{"model_spec": {}, "metadata": {}}`: `no "signature_def"`,
		`{"model_spec": 3, "metadata": {"signature_def": {}}}`:                                                                  "model_spec",
		`{"model_spec": {}, "metadata": {"signature_def": {"signature_def": {"a": {"inputs": {"x": {"tensor_shape": "x"}}}}}}}`: "signature_def",
	} {
		if _, _, err := signaturesFromREST([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", body, err, want)
		}
	}
}

// FuzzSignaturesFromREST: no metadata body makes the reader or the
// signature checks panic, and every signature accepted describes data
// the input-data loader takes.
func FuzzSignaturesFromREST(f *testing.F) {
	b, err := os.ReadFile("testdata/metadata_rest.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, "serving_default")
	f.Add(b, "tokens")
	f.Add([]byte(`{"model_spec":{},"metadata":{"signature_def":{"signature_def":{"s":{"inputs":{"x":{"dtype":"DT_INT8","tensor_shape":{"dim":[{"size":"-2"}]}}}}}}}}`), "s")
	f.Fuzz(func(t *testing.T, body []byte, name string) {
		_, sigs, err := signaturesFromREST(body)
		if err != nil {
			return
		}
		sig, err := pickSignature("m", sigs, name)
		if err != nil {
			return
		}
		_ = sig.modelSpec("m")
	})
}

package inferencepb

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Wire compatibility with Triton rests on these names and numbers
// (protocol.md §3–§6); a typo in the hand-written .proto would otherwise
// only show up against a real server.
func TestFieldNumbers(t *testing.T) {
	tests := []struct {
		message string
		field   string
		number  protoreflect.FieldNumber
	}{
		{"ModelReadyRequest", "version", 2},
		{"ServerMetadataResponse", "extensions", 3},
		{"ModelMetadataResponse", "outputs", 5},
		{"ModelMetadataResponse.TensorMetadata", "shape", 3},
		{"InferParameter", "bool_param", 1},
		{"InferParameter", "int64_param", 2},
		{"InferParameter", "string_param", 3},
		{"InferParameter", "double_param", 4},
		{"InferParameter", "uint64_param", 5},
		{"InferTensorContents", "bool_contents", 1},
		{"InferTensorContents", "int_contents", 2},
		{"InferTensorContents", "int64_contents", 3},
		{"InferTensorContents", "uint_contents", 4},
		{"InferTensorContents", "uint64_contents", 5},
		{"InferTensorContents", "fp32_contents", 6},
		{"InferTensorContents", "fp64_contents", 7},
		{"InferTensorContents", "bytes_contents", 8},
		{"ModelInferRequest", "model_name", 1},
		{"ModelInferRequest", "model_version", 2},
		{"ModelInferRequest", "id", 3},
		{"ModelInferRequest", "parameters", 4},
		{"ModelInferRequest", "inputs", 5},
		{"ModelInferRequest", "outputs", 6},
		{"ModelInferRequest", "raw_input_contents", 7},
		{"ModelInferRequest.InferInputTensor", "contents", 5},
		{"ModelInferRequest.InferRequestedOutputTensor", "parameters", 2},
		{"ModelInferResponse", "outputs", 5},
		{"ModelInferResponse", "raw_output_contents", 6},
		{"ModelInferResponse.InferOutputTensor", "parameters", 4},
		{"ModelStreamInferResponse", "error_message", 1},
		{"ModelStreamInferResponse", "infer_response", 2},
		{"ModelConfigResponse", "config", 1},
		{"StatisticDuration", "ns", 2},
		{"InferStatistics", "compute_output", 6},
		{"InferStatistics", "cache_miss", 8},
		{"InferResponseStatistics", "cancel", 6},
		{"InferBatchStatistics", "compute_output", 4},
		{"MemoryUsage", "byte_size", 3},
		{"ModelStatistics", "inference_stats", 6},
		{"ModelStatistics", "batch_stats", 7},
		{"ModelStatistics", "memory_usage", 8},
		{"ModelStatistics", "response_stats", 9},
		{"RepositoryIndexRequest", "ready", 2},
		{"RepositoryIndexResponse.ModelIndex", "reason", 4},
		{"RepositoryModelLoadRequest", "parameters", 3},
		{"ModelRepositoryParameter", "bytes_param", 4},
		{"SystemSharedMemoryRegisterRequest", "byte_size", 4},
		{"SystemSharedMemoryStatusResponse.RegionStatus", "offset", 3},
		{"CudaSharedMemoryRegisterRequest", "raw_handle", 2},
		{"CudaSharedMemoryRegisterRequest", "device_id", 3},
		{"CudaSharedMemoryStatusResponse.RegionStatus", "byte_size", 3},
		{"ModelConfig", "backend", 17},
		{"ModelConfig", "max_batch_size", 4},
		{"ModelConfig", "instance_group", 7},
		{"ModelConfig", "dynamic_batching", 11},
		{"ModelConfig", "sequence_batching", 13},
		{"ModelConfig", "parameters", 14},
		{"ModelConfig", "ensemble_scheduling", 15},
		{"ModelConfig", "response_cache", 24},
		{"ModelInput", "dims", 4},
		{"ModelInput", "optional", 8},
		{"ModelOutput", "dims", 3},
		{"ModelOutput", "reshape", 5},
		{"ModelInstanceGroup", "count", 2},
		{"ModelInstanceGroup", "kind", 4},
		{"ModelDynamicBatching", "max_queue_delay_microseconds", 2},
		{"ModelSequenceBatching", "direct", 3},
		{"ModelSequenceBatching", "oldest", 4},
		{"ModelSequenceBatching.Control", "data_type", 4},
		{"ModelSequenceBatching.Control", "bool_false_true", 5},
	}
	for _, tc := range tests {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName("inference." + tc.message))
		if err != nil {
			t.Errorf("message %s: %v", tc.message, err)
			continue
		}
		f := d.(protoreflect.MessageDescriptor).Fields().ByName(protoreflect.Name(tc.field))
		if f == nil {
			t.Errorf("%s has no field %s", tc.message, tc.field)
			continue
		}
		if f.Number() != tc.number {
			t.Errorf("%s.%s = %d, want %d", tc.message, tc.field, f.Number(), tc.number)
		}
	}
	if got := DataType_TYPE_STRING.Number(); got != 13 {
		t.Errorf("TYPE_STRING = %d, want 13", got)
	}
	if got := DataType_TYPE_BF16.Number(); got != 14 {
		t.Errorf("TYPE_BF16 = %d, want 14", got)
	}
	if GRPCInferenceService_ModelStreamInfer_FullMethodName != "/inference.GRPCInferenceService/ModelStreamInfer" {
		t.Errorf("stream method path %s", GRPCInferenceService_ModelStreamInfer_FullMethodName)
	}
}

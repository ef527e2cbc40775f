package refserver

import (
	"maps"
	"strings"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

// paramEnableEmptyFinal is the one triton_* request key Triton accepts over
// gRPC: Triton's C++ client sets it on every request, and it asks for an
// empty final response on streams of decoupled models.
const paramEnableEmptyFinal = "triton_enable_empty_final_response"

// grpcRequestParams applies gRPC's rule for reserved keys, which differs
// from HTTP's: keys on Triton's allow-list are taken off the map (with
// their type checked), other triton_* keys are refused. What remains goes
// through the protocol-neutral parser.
func grpcRequestParams(ps map[string]*inferencepb.InferParameter, req *inferRequest) error {
	rest := ps
	for k, v := range ps {
		if !strings.HasPrefix(k, "triton_") {
			continue
		}
		if k != paramEnableEmptyFinal {
			return errorf(codeInvalidArg, "parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys starting with 'triton_' are allowed: %s", paramEnableEmptyFinal)
		}
		b, ok := v.GetParameterChoice().(*inferencepb.InferParameter_BoolParam)
		if !ok {
			return errorf(codeInvalidArg, "invalid value type for '%s' parameter, expected bool_param.", k)
		}
		req.emptyFinal = b.BoolParam
		if len(rest) == len(ps) {
			rest = maps.Clone(ps)
		}
		delete(rest, k)
	}
	_, err := parseRequestParams(kservev2.ParamsFromProto(rest), &req.seq, &req.timeout)
	return err
}

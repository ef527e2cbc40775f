package kserve

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// A model the server says it does not have is the scenario's mistake
// (exit 2) however the server words it; anything else stays exit 3.
func TestServerErrModelNotFound(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want failure.Kind
	}{
		{"triton http 400", &transport.ServerError{Protocol: plan.ProtocolHTTP, HTTPStatus: 400, Message: "Request for unknown model: 'nosuch' is not found"}, failure.InvalidInput},
		{"triton grpc", &transport.ServerError{Protocol: plan.ProtocolGRPC, GRPCCode: codes.InvalidArgument, Message: "Request for unknown model: 'nosuch' is not found"}, failure.InvalidInput},
		{"kserve 404", &transport.ServerError{Protocol: plan.ProtocolHTTP, HTTPStatus: 404, Message: "Model with name nosuch does not exist."}, failure.InvalidInput},
		{"mlserver 400", &transport.ServerError{Protocol: plan.ProtocolHTTP, HTTPStatus: 400, Message: "Model nosuch with version  not found"}, failure.InvalidInput},
		{"grpc NotFound", &transport.ServerError{Protocol: plan.ProtocolGRPC, GRPCCode: codes.NotFound, Message: "x"}, failure.InvalidInput},
		{"bad request about something else", &transport.ServerError{Protocol: plan.ProtocolHTTP, HTTPStatus: 400, Message: "unexpected inference input 'X'"}, failure.Environment},
		{"server error", &transport.ServerError{Protocol: plan.ProtocolHTTP, HTTPStatus: 500, Message: "model not found in cache, internal error"}, failure.Environment},
		{"transport", errors.New("connection reset"), failure.Environment},
	}
	for _, tt := range tests {
		if got := failure.KindOf(serverErr("model metadata", tt.err)); got != tt.want {
			t.Errorf("%s: kind %v, want %v", tt.name, got, tt.want)
		}
	}
}

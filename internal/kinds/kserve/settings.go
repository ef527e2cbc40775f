package kserve

import (
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// settings are the server.kserve block.
type settings struct {
	// GRPCCompression is none, gzip or deflate.
	GRPCCompression string `json:"grpc_compression"`
}

// readSettings decodes srv's server.kserve block.
func readSettings(srv plan.Server) (settings, error) {
	var s settings
	err := kinds.DecodeOptions(srv, &s)
	return s, err
}

// grpcCompression is the compressor gRPC requests go through; "" for
// none.
func (s settings) grpcCompression() string {
	if s.GRPCCompression == "none" {
		return ""
	}
	return s.GRPCCompression
}

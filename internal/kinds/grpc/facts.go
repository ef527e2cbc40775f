package grpc

import (
	_ "embed"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// settingsSchema is the JSON Schema of the server.grpc block.
//
//go:embed settings.schema.json
var settingsSchema []byte

// Facts are what the scenario knows of the kind: schemas/ is generated
// from them (go generate ./schemas).
func (Kind) Facts() kinds.Facts {
	return kinds.Facts{
		About:    "any gRPC method",
		Settings: settingsSchema,
		// A gRPC service speaks gRPC only.
		Protocol: plan.ProtocolGRPC,
	}
}

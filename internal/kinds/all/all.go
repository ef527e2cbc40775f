// Package all lists every service kind perfscen knows: adding a kind is a
// folder under internal/kinds and a line here, then go generate ./schemas
// (internal/kinds' package documentation has the steps).
package all

import (
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/grpc"
	"github.com/perfscen/perfscen/internal/kinds/kserve"
	"github.com/perfscen/perfscen/internal/kinds/openai"
	"github.com/perfscen/perfscen/internal/kinds/tfserving"
	"github.com/perfscen/perfscen/internal/kinds/torchserve"
	"github.com/perfscen/perfscen/internal/kinds/tritoncapi"
)

// Kinds are the service kinds, by their server.kind names.
func Kinds() kinds.Set {
	return kinds.NewSet(
		kserve.Kind{},
		openai.Kind{},
		grpc.Kind{},
		tfserving.Kind{},
		torchserve.Kind{},
		tritoncapi.Kind{},
	)
}

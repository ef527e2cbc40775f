package kserve

import (
	_ "embed"

	"github.com/perfscen/perfscen/internal/kinds"
)

// settingsSchema is the JSON Schema of the server.kserve block.
//
//go:embed settings.schema.json
var settingsSchema []byte

// Facts are what the scenario knows of the kind: schemas/ is generated
// from them (go generate ./schemas).
func (Kind) Facts() kinds.Facts {
	return kinds.Facts{
		About:    "KServe v2 / Triton, the default",
		Settings: settingsSchema,
	}
}

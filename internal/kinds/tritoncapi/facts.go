package tritoncapi

import (
	_ "embed"

	"github.com/perfscen/perfscen/internal/kinds"
)

// settingsSchema is the JSON Schema of the server.triton_c_api block.
//
//go:embed settings.schema.json
var settingsSchema []byte

// Facts are what the scenario knows of the kind: schemas/ is generated
// from them (go generate ./schemas).
func (Kind) Facts() kinds.Facts {
	return kinds.Facts{
		About:    "Triton in process through its C API",
		Settings: settingsSchema,
		// Triton is started from the library the settings name.
		InProcess: true,
	}
}

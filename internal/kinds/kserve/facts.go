package kserve

import (
	"github.com/perfscen/perfscen/internal/kinds"
)

// Facts are what the scenario knows of the kind: schemas/ is generated
// from them (go generate ./schemas).
func (Kind) Facts() kinds.Facts {
	return kinds.Facts{
		About: "KServe v2 / Triton, the default",
	}
}

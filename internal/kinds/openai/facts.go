package openai

import (
	"github.com/perfscen/perfscen/internal/kinds"
)

// Facts are what the scenario knows of the kind: schemas/ is generated
// from them (go generate ./schemas).
func (Kind) Facts() kinds.Facts {
	return kinds.Facts{
		About: "OpenAI-compatible LLM endpoints; under servers, openai servers go with openai servers only and share one endpoint",
	}
}

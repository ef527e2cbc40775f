package openai

import (
	"github.com/perfscen/perfscen/internal/kinds/openai/llmsim"
	"github.com/perfscen/perfscen/internal/refserver"
)

// Mount is the openai kind's embedded flavour: the simulated LLM engines
// (llmsim) under /v1/ on the reference server's HTTP port, and their
// Prometheus figures at /metrics. Their model
// names (llm, llm_fp8) take parameters like any built-in model:
// --model-param llm.decode_slowdown=1.1.
func Mount() refserver.Mount { return mount{} }

type mount struct{}

func (mount) Prefix() string                                  { return "/v1/" }
func (mount) Paths() []string                                 { return []string{llmsim.MetricsPath} }
func (mount) Owns(model string) bool                          { return llmsim.IsModel(model) }
func (mount) Check(params map[string]map[string]string) error { return llmsim.CheckParams(params) }
func (mount) Start(params map[string]map[string]string) (refserver.Mounted, error) {
	return llmsim.New(llmsim.Options{Params: params})
}

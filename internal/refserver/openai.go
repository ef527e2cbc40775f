package refserver

import (
	"net/http"

	"github.com/perfscen/perfscen/internal/kinds/openai/llmsim"
)

// The reference server also answers the OpenAI-compatible API (/v1/...)
// with simulated LLM engines (package llmsim). Their model names share the
// ModelParams map with the Triton models, so `--model-param
// llm.decode_slowdown=1.1` works like any other model parameter.

// splitLLM separates the simulated engines' parameters from the others.
func splitLLM(all map[string]map[string]string) (triton, llm map[string]map[string]string) {
	for name, kv := range all {
		if llmsim.IsModel(name) {
			if llm == nil {
				llm = map[string]map[string]string{}
			}
			llm[name] = kv
			continue
		}
		if triton == nil {
			triton = map[string]map[string]string{}
		}
		triton[name] = kv
	}
	return triton, llm
}

// withoutLLM returns opts with the simulated engines' names and parameters
// taken out, for the Triton model checks.
func withoutLLM(opts Options) (Options, map[string]map[string]string) {
	triton, llm := splitLLM(opts.ModelParams)
	opts.ModelParams = triton
	if opts.Models != nil {
		kept := make([]string, 0, len(opts.Models))
		for _, m := range opts.Models {
			if !llmsim.IsModel(m) {
				kept = append(kept, m)
			}
		}
		opts.Models = kept
	}
	return opts, llm
}

func (s *Server) serveOpenAI(w http.ResponseWriter, r *http.Request) {
	s.llm.ServeHTTP(w, r)
}

// LLM is the simulated OpenAI-compatible side, for tests that change an
// engine while it runs.
func (s *Server) LLM() *llmsim.Server { return s.llm }

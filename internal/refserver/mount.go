package refserver

import (
	"net/http"
	"strings"
)

// Mount is another API served on the HTTP port beside KServe's, with
// models of its own: the openai kind mounts its simulated LLM engines
// under /v1/. Its model names share Options.ModelParams and
// Options.Repository with the built-in models, so --model-param works
// alike for both.
type Mount interface {
	// Prefix is the URL path it serves, e.g. "/v1/".
	Prefix() string
	// Owns says whether a model name is one of its models.
	Owns(model string) bool
	// Check refuses parameters its models do not take.
	Check(params map[string]map[string]string) error
	// Start builds the handler for its models with params.
	Start(params map[string]map[string]string) (Mounted, error)
}

// Pather is a Mount that also serves exact paths outside its prefix: the
// openai kind's engines publish their Prometheus figures at /metrics, as
// vLLM does on its API port.
type Pather interface {
	Paths() []string
}

// Mounted is a started Mount; Close stops it with the server.
type Mounted interface {
	http.Handler
	Close()
}

// splitMounts separates the mounts' model parameters (by mount) from the
// built-in models'.
func splitMounts(opts Options) (Options, []map[string]map[string]string) {
	per := make([]map[string]map[string]string, len(opts.Mounts))
	own := map[string]map[string]string{}
	for name, kv := range opts.ModelParams {
		i := mountOf(opts.Mounts, name)
		if i < 0 {
			own[name] = kv
			continue
		}
		if per[i] == nil {
			per[i] = map[string]map[string]string{}
		}
		per[i][name] = kv
	}
	opts.ModelParams = own
	if opts.Models != nil {
		kept := make([]string, 0, len(opts.Models))
		for _, m := range opts.Models {
			if mountOf(opts.Mounts, m) < 0 {
				kept = append(kept, m)
			}
		}
		opts.Models = kept
	}
	return opts, per
}

func mountOf(mounts []Mount, model string) int {
	for i, m := range mounts {
		if m.Owns(model) {
			return i
		}
	}
	return -1
}

// mounted routes a request to the mount whose prefix it has; false when
// none.
func (s *Server) mounted(w http.ResponseWriter, r *http.Request) bool {
	for i, m := range s.opts.Mounts {
		if strings.HasPrefix(r.URL.Path, m.Prefix()) || ownsPath(m, r.URL.Path) {
			s.mounts[i].ServeHTTP(w, r)
			return true
		}
	}
	return false
}

func ownsPath(m Mount, path string) bool {
	p, ok := m.(Pather)
	if !ok {
		return false
	}
	for _, x := range p.Paths() {
		if x == path {
			return true
		}
	}
	return false
}

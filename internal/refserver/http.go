package refserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/perfscen/perfscen/internal/kservev2"
)

// Handler returns the HTTP/REST API (KServe v2 plus Triton extensions).
func (s *Server) Handler() http.Handler {
	var h http.Handler = s.tritonHandler()
	if s.plain() {
		h = s.plainHTTP(h)
	}
	return h
}

func (s *Server) tritonHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic in HTTP handler", "path", r.URL.Path, "panic", p)
				writeError(w, errorf(codeInternal, "internal server error"))
			}
		}()
		s.route(w, r)
	})
}

// route dispatches on path segments; Triton answers unknown paths with 404
// and known paths with the wrong method with 405, both as JSON errors.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if s.mounted(w, r) {
		return
	}
	seg := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(seg) == 0 || seg[0] != "v2" {
		notFound(w)
		return
	}
	seg = seg[1:]
	switch {
	case len(seg) == 0:
		s.onlyGET(w, r, s.httpServerMetadata)
	case seg[0] == "health" && len(seg) == 2 && (seg[1] == "live" || seg[1] == "ready"):
		s.onlyGET(w, r, func(w http.ResponseWriter, r *http.Request) { plainOK(w) })
	case seg[0] == "models":
		s.routeModels(w, r, seg[1:])
	case seg[0] == "repository":
		s.routeRepository(w, r, seg[1:])
	case seg[0] == "systemsharedmemory":
		s.routeSystemShm(w, r, seg[1:])
	case seg[0] == "cudasharedmemory":
		s.routeCudaShm(w, r, seg[1:])
	default:
		notFound(w)
	}
}

func (s *Server) routeModels(w http.ResponseWriter, r *http.Request, seg []string) {
	if len(seg) == 1 && seg[0] == "stats" {
		s.onlyGET(w, r, func(w http.ResponseWriter, r *http.Request) { s.httpStats(w, "", "") })
		return
	}
	if len(seg) == 0 || seg[0] == "" {
		notFound(w)
		return
	}
	model, version, rest := seg[0], "", seg[1:]
	if len(rest) >= 2 && rest[0] == "versions" {
		version, rest = rest[1], rest[2:]
		if !isDecimal(version) {
			notFound(w)
			return
		}
	}
	action := ""
	if len(rest) == 1 {
		action = rest[0]
	} else if len(rest) > 1 {
		notFound(w)
		return
	}
	switch action {
	case "":
		s.onlyGET(w, r, func(w http.ResponseWriter, r *http.Request) { s.httpModelMetadata(w, model, version) })
	case "ready":
		s.onlyGET(w, r, func(w http.ResponseWriter, r *http.Request) {
			if _, err := s.resolve(model, version); err != nil {
				writePlainError(w, errorf(codeInvalidArg, "Model version not ready"))
				return
			}
			plainOK(w)
		})
	case "config":
		s.onlyGET(w, r, func(w http.ResponseWriter, r *http.Request) { s.httpModelConfig(w, model, version) })
	case "stats":
		s.onlyGET(w, r, func(w http.ResponseWriter, r *http.Request) { s.httpStats(w, model, version) })
	case "infer":
		s.onlyPOST(w, r, func(w http.ResponseWriter, r *http.Request) { s.httpInfer(w, r, model, version) })
	default:
		notFound(w)
	}
}

func isDecimal(v string) bool {
	if v == "" {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (s *Server) onlyGET(w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w)
		return
	}
	h(w, r)
}

func (s *Server) onlyPOST(w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w)
		return
	}
	h(w, r)
}

// Triton answers unknown paths and wrong methods (and a few errors of its
// HTTP front-end: readiness, infer on an unknown or decoupled model) with a
// JSON body under Content-Type text/plain; perfscen's server does the same
// so clients that look at the header see what they would see on Triton.

func notFound(w http.ResponseWriter) {
	writePlainError(w, errorf(codeNotFound, "Not Found"))
}

func methodNotAllowed(w http.ResponseWriter) {
	b, _ := json.Marshal(kservev2.Error{Error: "Method Not Allowed"})
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusMethodNotAllowed)
	w.Write(b)
}

// plainOK is Triton's empty 200 of the health and readiness endpoints.
func plainOK(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
}

// writePlainError is writeError under Content-Type text/plain.
func writePlainError(w http.ResponseWriter, err error) {
	b, _ := json.Marshal(kservev2.Error{Error: err.Error()})
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(httpStatus(err))
	w.Write(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func writeError(w http.ResponseWriter, err error) {
	if errors.Is(err, errDropped) {
		err = errorf(codeUnavailable, "%v", err)
	}
	writeJSON(w, httpStatus(err), kservev2.Error{Error: err.Error()})
}

func (s *Server) httpServerMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, kservev2.ServerMetadata{Name: ServerName, Version: s.version, Extensions: serverExtensions})
}

func (s *Server) httpModelMetadata(w http.ResponseWriter, model, version string) {
	m, err := s.resolve(model, version)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, m.metadata())
}

func (s *Server) httpModelConfig(w http.ResponseWriter, model, version string) {
	m, err := s.resolve(model, version)
	if err != nil {
		writeError(w, err)
		return
	}
	b, err := kservev2.MarshalModelConfigJSON(m.modelConfig())
	if err != nil {
		writeError(w, errorf(codeInternal, "%v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (s *Server) httpStats(w http.ResponseWriter, model, version string) {
	stats, err := s.modelStats(model, version)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, kservev2.StatisticsResponse{ModelStats: stats})
}

// modelStats collects statistics for one model (and version) or for all
// loaded models when model is "".
func (s *Server) modelStats(model, version string) ([]kservev2.ModelStats, error) {
	var models []*loadedModel
	if model == "" {
		models = s.repo.loadedModels()
	} else {
		m, err := s.resolve(model, version)
		if err != nil {
			return nil, errorf(codeInvalidArg, "requested model '%s' is not available", model)
		}
		models = []*loadedModel{m}
	}
	out := make([]kservev2.ModelStats, 0, len(models))
	for _, m := range models {
		out = append(out, toKServeStats(m.stats.snapshot()))
	}
	return out, nil
}

func toKServeStats(s ModelStats) kservev2.ModelStats {
	d := func(x durationStat) kservev2.StatDuration { return kservev2.StatDuration{Count: x.Count, Ns: x.NS} }
	ks := kservev2.ModelStats{
		Name: s.Name, Version: s.Version, LastInference: s.LastInference,
		InferenceCount: s.InferenceCount, ExecutionCount: s.ExecutionCount,
		InferenceStats: kservev2.InferStats{
			Success: d(s.Success), Fail: d(s.Fail), Queue: d(s.Queue),
			ComputeInput: d(s.ComputeInput), ComputeInfer: d(s.ComputeInfer), ComputeOutput: d(s.ComputeOutput),
		},
		ResponseStats: map[string]kservev2.ResponseStats{},
		BatchStats:    []kservev2.BatchStats{},
		MemoryUsage:   []kservev2.MemoryUsage{},
	}
	for _, b := range s.Batches {
		ks.BatchStats = append(ks.BatchStats, kservev2.BatchStats{
			BatchSize: b.BatchSize, ComputeInput: d(b.ComputeInput), ComputeInfer: d(b.ComputeInfer), ComputeOutput: d(b.ComputeOutput),
		})
	}
	return ks
}

package refserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/perfscen/perfscen/internal/kservev2"
)

// readJSONBody decodes an optional JSON body into v; an empty body leaves
// v untouched.
func readJSONBody(r *http.Request, v any) error {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return errorf(codeInvalidArg, "reading request body: %v", err)
	}
	if len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errorf(codeInvalidArg, "failed to parse the request JSON buffer: %v", err)
	}
	return nil
}

func (s *Server) routeRepository(w http.ResponseWriter, r *http.Request, seg []string) {
	switch {
	case len(seg) == 1 && seg[0] == "index":
		s.onlyPOST(w, r, s.httpRepositoryIndex)
	case len(seg) == 3 && seg[0] == "models" && (seg[2] == "load" || seg[2] == "unload"):
		s.onlyPOST(w, r, func(w http.ResponseWriter, r *http.Request) {
			var req kservev2.RepositoryControlRequest
			if err := readJSONBody(r, &req); err != nil {
				writeError(w, err)
				return
			}
			if err := s.repositoryControl(seg[1], seg[2] == "load", req.Parameters); err != nil {
				writeError(w, err)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
		})
	case len(seg) >= 2 && seg[0] != "index" && seg[0] != "models":
		writeError(w, errorf(codeUnsupported, "'repository_name' specification is not supported"))
	default:
		notFound(w)
	}
}

// repositoryControl loads or unloads a model; a load may carry a config
// override ("config", JSON text).
func (s *Server) repositoryControl(model string, load bool, params kservev2.Parameters) error {
	if !load {
		return s.repo.unload(model)
	}
	cfg, has, err := params.String("config")
	if err != nil {
		return errorf(codeInvalidArg, "failed to load '%s', load parameter 'config': %v", model, err)
	}
	if has && strings.TrimSpace(cfg) == "" {
		return errorf(codeInvalidArg, "failed to load '%s', load parameter 'config' is empty", model)
	}
	for k := range params {
		if strings.HasPrefix(k, "file:") {
			// Triton writes such files into a temporary repository; there
			// is none here, so the load fails where Triton's would on an
			// unusable file: polling the repository.
			return errorf(codeInternal, "failed to load '%s', failed to poll from model repository: built-in models take no model files ('%.40s')", model, k)
		}
	}
	return s.repo.loadWith(model, cfg)
}

func (s *Server) httpRepositoryIndex(w http.ResponseWriter, r *http.Request) {
	var req kservev2.RepositoryIndexRequest
	if err := readJSONBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	out := []kservev2.RepositoryModel{}
	for _, e := range s.repo.index(req.Ready) {
		out = append(out, kservev2.RepositoryModel{Name: e.name, Version: e.version, State: e.state, Reason: e.reason})
	}
	writeJSON(w, http.StatusOK, out)
}

// routeSystemShm serves /v2/systemsharedmemory[/region/NAME]/{status,register,unregister}.
func (s *Server) routeSystemShm(w http.ResponseWriter, r *http.Request, seg []string) {
	name, action, ok := shmPath(seg)
	if !ok {
		notFound(w)
		return
	}
	switch action {
	case "status":
		s.onlyGET(w, r, func(w http.ResponseWriter, r *http.Request) {
			regs, err := s.shm.status(name)
			if err != nil {
				writeError(w, err)
				return
			}
			out := make([]kservev2.SystemSharedMemoryStatus, len(regs))
			for i, reg := range regs {
				out[i] = kservev2.SystemSharedMemoryStatus{Name: reg.name, Key: reg.key, Offset: reg.offset, ByteSize: reg.byteSize}
			}
			writeJSON(w, http.StatusOK, out)
		})
	case "register":
		if name == "" {
			notFound(w)
			return
		}
		s.onlyPOST(w, r, func(w http.ResponseWriter, r *http.Request) {
			var req kservev2.SystemSharedMemoryRegister
			if err := readJSONBody(r, &req); err != nil {
				writeError(w, err)
				return
			}
			if err := s.shm.register(name, req.Key, req.Offset, req.ByteSize); err != nil {
				writeError(w, err)
				return
			}
			w.WriteHeader(http.StatusOK)
		})
	case "unregister":
		s.onlyPOST(w, r, func(w http.ResponseWriter, r *http.Request) {
			if err := s.shm.unregister(name); err != nil {
				writeError(w, err)
				return
			}
			w.WriteHeader(http.StatusOK)
		})
	default:
		notFound(w)
	}
}

func shmPath(seg []string) (name, action string, ok bool) {
	switch {
	case len(seg) == 1:
		return "", seg[0], true
	case len(seg) == 3 && seg[0] == "region" && seg[1] != "":
		return seg[1], seg[2], true
	}
	return "", "", false
}

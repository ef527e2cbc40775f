package refserver

import (
	"net/http"
)

// This server has no GPU, and answers the CUDA shared-memory extension as
// Triton built without GPU support does: no region is ever registered, so
// status lists none and unregister has nothing to do (clients such as
// perf_analyzer and Triton's examples unregister everything before they
// start); only register fails.

func errCUDARegister(name string) error {
	return errorf(codeInvalidArg, "failed to register CUDA shared memory region: '%s', GPUs not supported", name)
}

func errCUDANotFound(name string) error {
	return errorf(codeNotFound, "Unable to find cuda shared memory region: '%s'", name)
}

func (s *Server) routeCudaShm(w http.ResponseWriter, r *http.Request, seg []string) {
	name, action, ok := shmPath(seg)
	if !ok {
		notFound(w)
		return
	}
	switch action {
	case "status":
		s.onlyGET(w, r, func(w http.ResponseWriter, r *http.Request) {
			if name != "" {
				writeError(w, errCUDANotFound(name))
				return
			}
			writeJSON(w, http.StatusOK, []struct{}{})
		})
	case "register":
		if name == "" {
			writeError(w, errorf(codeInvalidArg, "'region name' is necessary to register cuda shared memory region"))
			return
		}
		s.onlyPOST(w, r, func(w http.ResponseWriter, r *http.Request) { writeError(w, errCUDARegister(name)) })
	case "unregister":
		s.onlyPOST(w, r, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	default:
		notFound(w)
	}
}

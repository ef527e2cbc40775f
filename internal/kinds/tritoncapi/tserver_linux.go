//go:build linux

package tritoncapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/perfscen/perfscen/internal/kservev2"
)

// liveServers counts in-process servers not yet deleted; tests assert it
// drops back to zero.
var liveServers atomic.Int64

// tserver is one in-process TRITONSERVER_Server with perfscen's response
// allocator.
type tserver struct {
	l         *lib
	ptr       uintptr // TRITONSERVER_Server*
	allocator uintptr // TRITONSERVER_ResponseAllocator*
	loaded    []string
	closeOnce sync.Once
}

// newTServer creates the server in explicit model-control mode (nothing
// is loaded until perfscen asks, so only the scenario's models load).
func newTServer(l *lib, c config) (_ *tserver, err error) {
	var opts uintptr
	if err := l.err(l.call("TRITONSERVER_ServerOptionsNew", uintptr(unsafe.Pointer(&opts)))); err != nil {
		return nil, fmt.Errorf("server options: %w", err)
	}
	defer l.call("TRITONSERVER_ServerOptionsDelete", opts)
	id, repo, backends := cstr("perfscen"), cstr(c.ModelRepository), cstr(c.BackendDirectory)
	steps := []struct {
		what string
		call func() uintptr
	}{
		{"server id", func() uintptr {
			return l.call("TRITONSERVER_ServerOptionsSetServerId", opts, uintptr(unsafe.Pointer(&id[0])))
		}},
		{"model repository", func() uintptr {
			return l.call("TRITONSERVER_ServerOptionsSetModelRepositoryPath", opts, uintptr(unsafe.Pointer(&repo[0])))
		}},
		{"backend directory", func() uintptr {
			return l.call("TRITONSERVER_ServerOptionsSetBackendDirectory", opts, uintptr(unsafe.Pointer(&backends[0])))
		}},
		{"model control", func() uintptr {
			return l.call("TRITONSERVER_ServerOptionsSetModelControlMode", opts, modelControlExplicit)
		}},
		{"strict model config", func() uintptr {
			return l.call("TRITONSERVER_ServerOptionsSetStrictModelConfig", opts, boolArg(c.StrictModelConfig))
		}},
		{"strict readiness", func() uintptr { return l.call("TRITONSERVER_ServerOptionsSetStrictReadiness", opts, 1) }},
		{"log info", func() uintptr { return l.call("TRITONSERVER_ServerOptionsSetLogInfo", opts, boolArg(c.LogInfo)) }},
		{"log warn", func() uintptr { return l.call("TRITONSERVER_ServerOptionsSetLogWarn", opts, 1) }},
		{"log error", func() uintptr { return l.call("TRITONSERVER_ServerOptionsSetLogError", opts, 1) }},
		{"log verbose", func() uintptr {
			return l.call("TRITONSERVER_ServerOptionsSetLogVerbose", opts, uintptr(c.LogVerbose))
		}},
		{"metrics", func() uintptr { return l.call("TRITONSERVER_ServerOptionsSetMetrics", opts, 0) }},
		{"exit timeout", func() uintptr {
			return l.call("TRITONSERVER_ServerOptionsSetExitTimeout", opts, uintptr(max(1, int(c.exitTimeout.Seconds()))))
		}},
		// Set, not left to the options object: a failed load was seen
		// retried again and again in some processes and not in others,
		// which an unset retry count explains; tritonserver's default is 0.
		{"model load retry count", func() uintptr { return l.call("TRITONSERVER_ServerOptionsSetModelLoadRetryCount", opts, 0) }},
		{"pinned memory pool", func() uintptr {
			return l.call("TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize", opts, uintptr(c.PinnedMemoryPool))
		}},
	}
	if c.LogFile != "" {
		file := cstr(c.LogFile)
		steps = append(steps, struct {
			what string
			call func() uintptr
		}{"log file", func() uintptr {
			return l.call("TRITONSERVER_ServerOptionsSetLogFile", opts, uintptr(unsafe.Pointer(&file[0])))
		}})
	}
	for _, st := range steps {
		if err := l.err(st.call()); err != nil {
			return nil, fmt.Errorf("server option %s: %w", st.what, err)
		}
	}
	s := &tserver{l: l}
	if err := l.err(l.call("TRITONSERVER_ServerNew", uintptr(unsafe.Pointer(&s.ptr)), opts)); err != nil {
		return nil, err
	}
	liveServers.Add(1)
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if err := l.err(l.call("TRITONSERVER_ResponseAllocatorNew", uintptr(unsafe.Pointer(&s.allocator)), cbAlloc, cbRelease, 0)); err != nil {
		return nil, fmt.Errorf("response allocator: %w", err)
	}
	return s, nil
}

func boolArg(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}

// load loads a model from the repository and waits until it is ready:
// TRITONSERVER_ServerLoadModel returns once the load succeeded or failed,
// with Triton's reason.
func (s *tserver) load(name string) error {
	n := cstr(name)
	if err := s.l.err(s.l.call("TRITONSERVER_ServerLoadModel", s.ptr, uintptr(unsafe.Pointer(&n[0])))); err != nil {
		return err
	}
	s.loaded = append(s.loaded, name)
	var ready bool
	if err := s.l.err(s.l.call("TRITONSERVER_ServerModelIsReady", s.ptr, uintptr(unsafe.Pointer(&n[0])), version(""), uintptr(unsafe.Pointer(&ready)))); err != nil {
		return err
	}
	if !ready {
		return fmt.Errorf("model %s loaded but is not ready", name)
	}
	return nil
}

// version is a model version as the C API takes it: -1 lets the server
// choose.
func version(v string) uintptr {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return uintptr(n)
	}
	return ^uintptr(0) // -1
}

func (s *tserver) metadata() (*kservev2.ServerMetadata, error) {
	var msg uintptr
	if err := s.l.err(s.l.call("TRITONSERVER_ServerMetadata", s.ptr, uintptr(unsafe.Pointer(&msg)))); err != nil {
		return nil, err
	}
	b, err := s.l.message(msg)
	if err != nil {
		return nil, err
	}
	var md kservev2.ServerMetadata
	if err := json.Unmarshal(b, &md); err != nil {
		return nil, fmt.Errorf("server metadata: %w", err)
	}
	return &md, nil
}

func (s *tserver) modelConfig(name, ver string) (*kservev2.ModelConfig, error) {
	n := cstr(name)
	var msg uintptr
	if err := s.l.err(s.l.call("TRITONSERVER_ServerModelConfig", s.ptr, uintptr(unsafe.Pointer(&n[0])), version(ver), 1, uintptr(unsafe.Pointer(&msg)))); err != nil {
		return nil, err
	}
	b, err := s.l.message(msg)
	if err != nil {
		return nil, err
	}
	pb, err := kservev2.UnmarshalModelConfigJSON(b)
	if err != nil {
		return nil, fmt.Errorf("model %s config: %w", name, err)
	}
	return kservev2.SummarizeModelConfig(pb)
}

func (s *tserver) statistics(name, ver string) ([]byte, error) {
	n := cstr(name)
	var msg uintptr
	if err := s.l.err(s.l.call("TRITONSERVER_ServerModelStatistics", s.ptr, uintptr(unsafe.Pointer(&n[0])), version(ver), uintptr(unsafe.Pointer(&msg)))); err != nil {
		return nil, err
	}
	return s.l.message(msg)
}

// close unloads the models perfscen loaded, stops the server (in-flight
// requests get the exit timeout) and deletes it. Safe to call twice.
func (s *tserver) close() error {
	var first error
	s.closeOnce.Do(func() {
		for _, name := range s.loaded {
			n := cstr(name)
			if err := s.l.err(s.l.call("TRITONSERVER_ServerUnloadModel", s.ptr, uintptr(unsafe.Pointer(&n[0])))); err != nil && first == nil {
				first = fmt.Errorf("unloading %s: %w", name, err)
			}
		}
		if err := s.l.err(s.l.call("TRITONSERVER_ServerStop", s.ptr)); err != nil && first == nil {
			first = fmt.Errorf("stopping the server: %w", err)
		}
		if err := s.l.err(s.l.call("TRITONSERVER_ServerDelete", s.ptr)); err != nil && first == nil {
			first = fmt.Errorf("deleting the server: %w", err)
		}
		liveServers.Add(-1)
		if s.allocator != 0 {
			if err := s.l.err(s.l.call("TRITONSERVER_ResponseAllocatorDelete", s.allocator)); err != nil && first == nil {
				first = err
			}
		}
	})
	return first
}

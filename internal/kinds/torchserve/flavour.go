package torchserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/perfscen/perfscen/internal/kinds/embedded"
	"github.com/perfscen/perfscen/internal/refserver"
)

// The embedded flavour's endpoint names (perfscen serve --endpoint
// name=host:port).
const (
	EndpointInference  = "inference"
	EndpointManagement = "management"
	EndpointMetrics    = "metrics"
)

// frontend serves the reference server's built-in models through
// TorchServe's inference, management and metrics APIs.
type frontend struct {
	core    *refserver.Server
	started time.Time
	stats   *tsStats

	base     context.Context
	cancel   context.CancelFunc
	mu       sync.Mutex
	closing  bool
	inflight sync.WaitGroup

	servers []*http.Server
	addrs   map[string]string
	serving sync.WaitGroup
}

// ServeFlavour starts TorchServe's three APIs over core: inference
// (predictions, ping), management (models list and describe, with one
// worker per model instance) and metrics (the ts_* counters). addrs
// names each endpoint's listen address; missing names take TorchServe's
// ports on loopback, "-" serves none.
func (Kind) ServeFlavour(ctx context.Context, core *refserver.Server, addrs map[string]string, listen embedded.Listen) (embedded.Frontend, error) {
	for name := range addrs {
		switch name {
		case EndpointInference, EndpointManagement, EndpointMetrics:
		default:
			return nil, fmt.Errorf("the torchserve flavour has no endpoint %q (it has %s, %s and %s)", name, EndpointInference, EndpointManagement, EndpointMetrics)
		}
	}
	if listen == nil {
		var lc net.ListenConfig
		listen = lc.Listen
	}
	f := &frontend{core: core, started: time.Now(), stats: newTSStats(), addrs: map[string]string{}}
	f.base, f.cancel = context.WithCancel(context.Background())
	handlers := map[string]http.Handler{
		EndpointInference:  http.HandlerFunc(f.inference),
		EndpointManagement: http.HandlerFunc(f.management),
		EndpointMetrics:    http.HandlerFunc(f.metrics),
	}
	defaults := map[string]string{
		EndpointInference:  "127.0.0.1:" + defaultInferencePort,
		EndpointManagement: "127.0.0.1:" + defaultManagementPort,
		EndpointMetrics:    "127.0.0.1:" + defaultMetricsPort,
	}
	for _, name := range []string{EndpointInference, EndpointManagement, EndpointMetrics} {
		addr, ok := addrs[name]
		if !ok {
			addr = defaults[name]
		}
		if addr == "-" {
			continue
		}
		ln, err := listen(ctx, "tcp", addr)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("listening for the %s API on %s: %w", name, addr, err)
		}
		srv := &http.Server{
			Handler:           f.track(handlers[name]),
			ReadHeaderTimeout: 30 * time.Second,
			BaseContext:       func(net.Listener) context.Context { return f.base },
			ErrorLog:          log.New(io.Discard, "", 0),
		}
		f.servers = append(f.servers, srv)
		f.addrs[name] = ln.Addr().String()
		f.serving.Add(1)
		go func() {
			defer f.serving.Done()
			_ = srv.Serve(ln)
		}()
	}
	return f, nil
}

// track counts handlers in flight, so Close returns only after the last.
func (f *frontend) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		if f.closing {
			f.mu.Unlock()
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableException", "the server is shutting down")
			return
		}
		f.inflight.Add(1)
		f.mu.Unlock()
		defer f.inflight.Done()
		h.ServeHTTP(w, r)
	})
}

func (f *frontend) Endpoints() map[string]string {
	out := make(map[string]string, len(f.addrs))
	for k, v := range f.addrs {
		out[k] = v
	}
	return out
}

// Close stops every listener and connection and ends the requests in
// flight (their contexts derive from the frontend's).
func (f *frontend) Close() error {
	var errs []error
	f.mu.Lock()
	f.closing = true
	f.mu.Unlock()
	f.cancel()
	for _, s := range f.servers {
		if err := s.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	f.serving.Wait()
	f.inflight.Wait()
	return errors.Join(errs...)
}

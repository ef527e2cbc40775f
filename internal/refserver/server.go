package refserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/procacct"
)

// Server is a running (or ready to run) reference inference server.
type Server struct {
	opts    Options
	log     *slog.Logger
	version string
	repo    *repository
	shm     *shmRegistry
	mounts  []Mounted // started Options.Mounts, in order
	// acct accounts each model's instance threads (AccountThreads); nil
	// otherwise.
	acct *procacct.Threads

	// base is the parent of every HTTP request context; cancelling it ends
	// requests that outlive the shutdown grace (e.g. hung models).
	base       context.Context
	cancelBase context.CancelFunc

	mu       sync.Mutex
	started  bool
	closed   bool
	httpSrv  *http.Server
	grpcSrv  *grpc.Server
	health   *health.Server
	httpAddr net.Addr
	grpcAddr net.Addr
	metrics  *http.Server
	metAddr  net.Addr
	serveErr chan error
	closeErr error
	done     chan struct{}
}

// New builds a server with its models loaded; Start binds the listeners.
func New(opts Options) (*Server, error) {
	flavor, err := ParseFlavor(string(opts.Flavor))
	if err != nil {
		return nil, err
	}
	opts.Flavor = flavor
	s := &Server{opts: opts, log: opts.Logger, version: opts.Version, shm: newShmRegistry(), done: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.version == "" {
		s.version = "dev"
	}
	defs := builtinModels()
	opts, mountParams := splitMounts(opts)
	if err := checkModels(defs, opts); err != nil {
		return nil, err
	}
	for i, m := range opts.Mounts {
		if err := m.Check(mountParams[i]); err != nil {
			return nil, err
		}
	}
	want := opts.Models
	if want == nil {
		want = BuiltinModels()
	}
	if opts.Repository != nil {
		// Only these exist: the index lists them and nothing else loads.
		kept := map[string]*modelDef{}
		for _, name := range opts.Repository {
			if defs[name] != nil {
				kept[name] = defs[name]
			}
		}
		defs = kept
		if opts.Models == nil {
			want = slices.Sorted(maps.Keys(defs))
		}
	}
	s.repo = &repository{entries: map[string]*modelEntry{}, after: preciseAfter}
	if opts.PlainTimers {
		s.repo.after = timerAfter
	}
	if opts.AccountThreads {
		s.acct = procacct.NewThreads(true)
		s.repo.acct = s.acct
	}
	for name, def := range defs {
		e := &modelEntry{def: def, kv: map[string]string{}, reason: "not loaded"}
		for k, v := range opts.ModelParams[name] {
			e.kv[k] = v
		}
		if _, err := e.params(); err != nil {
			return nil, fmt.Errorf("model %q: %w", name, err)
		}
		s.repo.entries[name] = e
	}
	for _, name := range want {
		if err := s.repo.load(name); err != nil {
			s.repo.closeAll()
			return nil, fmt.Errorf("loading model %q: %w", name, err)
		}
	}
	for i, m := range opts.Mounts {
		h, err := m.Start(mountParams[i])
		if err != nil {
			for _, started := range s.mounts {
				started.Close()
			}
			s.repo.closeAll()
			return nil, err
		}
		s.mounts = append(s.mounts, h)
	}
	s.base, s.cancelBase = context.WithCancel(context.Background())
	return s, nil
}

// SetModelParameter changes one parameter of a model. Request-time keys
// apply to the next request; load-time keys (instance_count,
// dynamic_batching, max_queue_delay, preferred_batch_sizes) apply at the
// model's next load.
func (s *Server) SetModelParameter(model, key, value string) error {
	s.repo.mu.Lock()
	defer s.repo.mu.Unlock()
	e, ok := s.repo.entries[model]
	if !ok {
		return fmt.Errorf("model %q: unknown model", model)
	}
	old, had := e.kv[key]
	e.kv[key] = value
	p, err := e.params()
	if err != nil {
		if had {
			e.kv[key] = old
		} else {
			delete(e.kv, key)
		}
		return fmt.Errorf("model %q: %w", model, err)
	}
	if m := e.loaded; m != nil && !isLoadTime(key) {
		cur := *m.params.Load()
		fresh := p
		// Keep the scheduler settings the model was loaded with.
		fresh.instanceCount, fresh.dynamicBatching, fresh.maxQueueDelay, fresh.preferred =
			cur.instanceCount, cur.dynamicBatching, cur.maxQueueDelay, cur.preferred
		m.params.Store(&fresh)
		m.rng.reseed(fresh.seed)
	}
	return nil
}

// LoadModel loads (or reloads) a built-in model, as the repository API does.
func (s *Server) LoadModel(name string) error { return s.repo.load(name) }

// UnloadModel stops serving a model once its queued requests finish.
func (s *Server) UnloadModel(name string) error { return s.repo.unload(name) }

// Statistics returns a snapshot of every loaded model's statistics.
func (s *Server) Statistics() []ModelStats {
	var out []ModelStats
	for _, m := range s.repo.loadedModels() {
		out = append(out, m.stats.snapshot())
	}
	return out
}

// Start binds the listeners and serves in the background until ctx ends
// or Close is called.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return errors.New("refserver: Start called twice or after Close")
	}
	tlsCfg, err := s.opts.TLS.config()
	if err != nil {
		return err
	}
	var lc net.ListenConfig
	listen := lc.Listen
	if s.opts.Listen != nil {
		listen = s.opts.Listen
	}
	var httpLn, grpcLn net.Listener
	if addr := orDefault(s.opts.HTTPAddr, defaultHTTPAddr); addr != "-" {
		if httpLn, err = listen(ctx, "tcp", addr); err != nil {
			return fmt.Errorf("listening for HTTP on %s: %w", addr, err)
		}
	}
	if addr := orDefault(s.opts.GRPCAddr, defaultGRPCAddr); addr != "-" {
		if grpcLn, err = listen(ctx, "tcp", addr); err != nil {
			if httpLn != nil {
				httpLn.Close()
			}
			return fmt.Errorf("listening for gRPC on %s: %w", addr, err)
		}
	}
	var metLn net.Listener
	if addr := s.opts.MetricsAddr; addr != "" && addr != "-" {
		if metLn, err = listen(ctx, "tcp", addr); err != nil {
			for _, ln := range []net.Listener{httpLn, grpcLn} {
				if ln != nil {
					ln.Close()
				}
			}
			return fmt.Errorf("listening for metrics on %s: %w", addr, err)
		}
	}
	s.started = true
	s.serveErr = make(chan error, 3)
	if metLn != nil {
		s.metAddr = metLn.Addr()
		s.metrics = &http.Server{Handler: s.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
		go func() {
			err := s.metrics.Serve(metLn)
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			s.serveErr <- err
		}()
		s.log.Info("started Metrics Service", "addr", s.metAddr.String())
	}
	if httpLn != nil {
		s.httpAddr = httpLn.Addr()
		s.httpSrv = &http.Server{
			Handler:           s.Handler(),
			ReadHeaderTimeout: 10 * time.Second,
			BaseContext:       func(net.Listener) context.Context { return s.base },
			TLSConfig:         cloneTLS(tlsCfg), // ServeTLS edits its config
			ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		}
		go func() {
			var err error
			if tlsCfg != nil {
				err = s.httpSrv.ServeTLS(httpLn, "", "")
			} else {
				err = s.httpSrv.Serve(httpLn)
			}
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			s.serveErr <- err
		}()
		s.log.Info("started HTTPService", "addr", s.httpAddr.String())
	}
	if grpcLn != nil {
		s.grpcAddr = grpcLn.Addr()
		gopts := []grpc.ServerOption{grpc.MaxRecvMsgSize(1<<31 - 1), grpc.MaxSendMsgSize(1<<31 - 1)}
		gopts = append(gopts, arrivalOptions()...)
		gopts = append(gopts, s.grpcFlavorOptions()...)
		if tlsCfg != nil {
			gopts = append(gopts, grpc.Creds(credentials.NewTLS(cloneTLS(tlsCfg))))
		}
		s.grpcSrv = grpc.NewServer(gopts...)
		s.health = s.RegisterGRPC(s.grpcSrv)
		go func() { s.serveErr <- s.grpcSrv.Serve(grpcLn) }()
		s.log.Info("started GRPCInferenceService", "addr", s.grpcAddr.String())
	}
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.done:
		}
	}()
	return nil
}

// ListenAndServe starts the server and blocks until ctx ends, then closes
// it gracefully.
func (s *Server) ListenAndServe(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return s.Close()
}

// HTTPAddr is the bound HTTP address ("" before Start or when disabled).
func (s *Server) HTTPAddr() string { return addrString(&s.mu, &s.httpAddr) }

// GRPCAddr is the bound gRPC address ("" before Start or when disabled).
func (s *Server) GRPCAddr() string { return addrString(&s.mu, &s.grpcAddr) }

// MetricsAddr is the bound metrics address ("" before Start or when
// disabled).
func (s *Server) MetricsAddr() string { return addrString(&s.mu, &s.metAddr) }

func addrString(mu *sync.Mutex, a *net.Addr) string {
	mu.Lock()
	defer mu.Unlock()
	if *a == nil {
		return ""
	}
	return (*a).String()
}

// RegisterGRPC registers the inference service and grpc.health.v1 on g and
// returns the health server so callers can flip serving status.
func (s *Server) RegisterGRPC(g *grpc.Server) *health.Server {
	inferencepb.RegisterGRPCInferenceServiceServer(g, &grpcService{s: s})
	h := health.NewServer()
	h.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	h.SetServingStatus("inference.GRPCInferenceService", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(g, h)
	return h
}

// Accounting is the models' own CPU accounting (Options.AccountThreads),
// nil without it.
func (s *Server) Accounting() procacct.Source {
	if s.acct == nil {
		return nil
	}
	return s.acct
}

// Close stops intake, waits up to the shutdown grace for in-flight
// requests, cancels what remains, drains model queues and unmaps shared
// memory. It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.done
		return s.closeErr
	}
	s.closed = true
	httpSrv, grpcSrv, hs, metSrv := s.httpSrv, s.grpcSrv, s.health, s.metrics
	s.mu.Unlock()

	if hs != nil {
		hs.Shutdown()
	}
	grace := s.opts.ShutdownGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	var wg sync.WaitGroup
	var errs []error
	if httpSrv != nil {
		wg.Go(func() {
			if err := httpSrv.Shutdown(ctx); err != nil {
				s.cancelBase()
				httpSrv.Close()
			}
		})
	}
	if grpcSrv != nil {
		wg.Go(func() {
			stopped := make(chan struct{})
			go func() { grpcSrv.GracefulStop(); close(stopped) }()
			select {
			case <-stopped:
			case <-ctx.Done():
				grpcSrv.Stop()
				<-stopped
			}
		})
	}
	if metSrv != nil {
		wg.Go(func() {
			if err := metSrv.Shutdown(ctx); err != nil {
				metSrv.Close()
			}
		})
	}
	wg.Wait()
	cancel()
	s.cancelBase()
	for _, m := range s.mounts {
		m.Close()
	}
	s.repo.closeAll()
	if s.acct != nil {
		s.acct.Close()
	}
	if err := s.shm.closeAll(); err != nil {
		errs = append(errs, err)
	}
	if s.serveErr != nil {
		for range countTrue(httpSrv != nil, grpcSrv != nil, metSrv != nil) {
			if err := <-s.serveErr; err != nil {
				errs = append(errs, err)
			}
		}
	}
	s.closeErr = errors.Join(errs...)
	close(s.done)
	return s.closeErr
}

func cloneTLS(c *tls.Config) *tls.Config {
	if c == nil {
		return nil
	}
	return c.Clone()
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// CheckOptions reports what New would refuse in opts' model set and model
// parameters, without loading anything: scenario validation uses it so a
// misspelt model or parameter is caught before a run.
func CheckOptions(opts Options) error {
	opts, mountParams := splitMounts(opts)
	if err := checkModels(builtinModels(), opts); err != nil {
		return err
	}
	for i, m := range opts.Mounts {
		if err := m.Check(mountParams[i]); err != nil {
			return err
		}
	}
	return nil
}

func checkModels(defs map[string]*modelDef, opts Options) error {
	names := make([]string, 0, len(opts.ModelParams))
	for name := range opts.ModelParams {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if defs[name] == nil {
			return fmt.Errorf("model parameters for %q: unknown model (built-ins: %v)", name, BuiltinModels())
		}
		if _, err := applyParams(defaultParams(), opts.ModelParams[name]); err != nil {
			return fmt.Errorf("model %q: %w", name, err)
		}
		if err := defs[name].checkOwnParams(opts.ModelParams[name]); err != nil {
			return fmt.Errorf("model %q: %w", name, err)
		}
	}
	for _, name := range opts.Repository {
		if defs[name] == nil && mountOf(opts.Mounts, name) < 0 {
			return fmt.Errorf("repository model %q: unknown model (built-ins: %v)", name, BuiltinModels())
		}
	}
	for _, name := range opts.Models {
		if defs[name] == nil {
			return fmt.Errorf("model %q: unknown model (built-ins: %v)", name, BuiltinModels())
		}
		if opts.Repository != nil && !slices.Contains(opts.Repository, name) {
			return fmt.Errorf("model %q: not among the repository's models %v", name, opts.Repository)
		}
	}
	return nil
}

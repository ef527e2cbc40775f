package refserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"
)

// Options configures a Server. The zero value serves every built-in model
// on 127.0.0.1:8000 (HTTP) and 127.0.0.1:8001 (gRPC) without TLS.
type Options struct {
	// HTTPAddr and GRPCAddr are listen addresses; "" means the Triton
	// defaults on loopback, "127.0.0.1:0" picks a free port, and "-"
	// disables that listener.
	HTTPAddr, GRPCAddr string
	// MetricsAddr is where Prometheus metrics are served (GET /metrics,
	// Triton's metrics port); "" or "-" serves none.
	MetricsAddr string
	// Models names the built-in models to load at start; nil loads all.
	// The others are listed by the repository index and can be loaded.
	Models []string
	// Repository names the built-in models the repository holds; nil
	// holds all. Models outside it do not exist for this server.
	Repository []string
	// ModelParams overrides model parameters, by model then key (see the
	// Param* constants), e.g. {"delay": {"delay": "5ms"}}.
	ModelParams map[string]map[string]string
	// TLS, when set, serves both protocols over TLS.
	TLS *TLSOptions
	// Logger receives lifecycle and error logs; nil discards them.
	Logger *slog.Logger
	// Version is reported in server metadata; "" means "dev".
	Version string
	// Flavor is the server imitated: Triton (default) or plain KServe v2.
	Flavor Flavor
	// ShutdownGrace bounds how long Close waits for in-flight requests
	// before cancelling them; 0 means 10s.
	ShutdownGrace time.Duration
	// Listen, when set, replaces TCP for the three listeners, which then
	// listen on their addresses as names; tests serve over an in-memory
	// network with it. Nil listens on TCP.
	Listen func(ctx context.Context, network, addr string) (net.Listener, error)
	// Mounts are other APIs served on the HTTP port with models of their
	// own (the openai kind's simulated engines under /v1/).
	Mounts []Mount
	// PlainTimers waits out service times and batching delays on ordinary
	// timers instead of the shared sub-millisecond wake-up, which spins
	// before each deadline. Tests under testing/synctest set it: their fake
	// clock fires timers exactly, and never advances while a goroutine
	// spins.
	PlainTimers bool
	// AccountThreads runs each model instance on an OS thread of its own
	// (as Triton's instances are threads of their own) and counts those
	// threads' CPU time, run-queue delay and, where the machine has
	// hardware counters, instructions per model: the server's own figures
	// a busy machine cannot move (Accounting). perfscen run sets it for
	// the server it embeds; perfscen serve, measured from outside as a
	// process, does not need it.
	AccountThreads bool

	// inferArrived, in tests, sees each gRPC ModelInfer request once it
	// is parsed, before it waits for the calls ahead of it (arrivals).
	inferArrived func(*inferRequest)
}

// TLSOptions are PEM files for the server certificate and, optionally, a
// CA bundle that client certificates must chain to (mutual TLS). Config,
// when non-nil, is used as is instead of the files.
type TLSOptions struct {
	CertFile, KeyFile string
	ClientCAFile      string
	Config            *tls.Config
}

const (
	defaultHTTPAddr = "127.0.0.1:8000"
	defaultGRPCAddr = "127.0.0.1:8001"
	// ServerName is what server metadata reports as "name": Triton's, as
	// Triton's clients and examples check it; the version stays perfscen's.
	ServerName = "triton"
)

func (t *TLSOptions) config() (*tls.Config, error) {
	if t == nil {
		return nil, nil
	}
	if t.Config != nil {
		return t.Config.Clone(), nil
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("loading TLS certificate %s and key %s: %w", t.CertFile, t.KeyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if t.ClientCAFile != "" {
		pem, err := os.ReadFile(t.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("reading client CA %s: %w", t.ClientCAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client CA %s: no PEM certificates found", t.ClientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

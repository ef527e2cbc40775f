package conformance

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/tfserving"
	"github.com/perfscen/perfscen/runner/plan"
)

// tritonDir is the real Triton build shared by the machines: ../shared
// from the repository root, or $PERFSCEN_SHARED_DIR (a checkout elsewhere,
// such as a git worktree, names the folder so).
func tritonDir() string {
	if d := os.Getenv("PERFSCEN_SHARED_DIR"); d != "" {
		return filepath.Join(d, "triton")
	}
	return filepath.Join("..", "..", "..", "shared", "triton")
}

// freePort asks the OS for a port nobody uses now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// The tfserving kind pointed at a real Triton's HTTP and gRPC ports (the
// mistake a user makes with two servers on one host) stops before any
// load with exit 2, saying the port is Triton's. Triton runs with an
// empty model repository: what it is, not what it serves, is the point.
func TestTFServingKindOnRealTritonPorts(t *testing.T) {
	run := filepath.Join(tritonDir(), "run-triton")
	if _, err := os.Stat(run); err != nil {
		t.Skipf("SKIP: no real Triton at %s (%v): the tfserving kind's wrong-port check against Triton did not run", tritonDir(), err)
	}
	httpPort, grpcPort, metricsPort := freePort(t), freePort(t), freePort(t)
	cmd := exec.Command(run, "--http-port", httpPort, "--grpc-port", grpcPort, "--metrics-port", metricsPort, "--model-repository", t.TempDir())
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Triton: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	// Triton takes a few seconds to start; its readiness endpoint says
	// when.
	ready := func(ctx context.Context) (bool, error) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("Triton exited before it was ready: %v\n%s", err, logs.String())
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+httpPort+"/v2/health/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}
	if err := kinds.WaitReady(context.Background(), ready, "Triton", 60*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, logs.String())
	}
	for _, c := range []struct {
		proto plan.Protocol
		port  string
		want  string
	}{
		{plan.ProtocolHTTP, httpPort, "is a KServe v2 HTTP endpoint (triton 2."},
		{plan.ProtocolGRPC, grpcPort, "is a KServe v2 gRPC endpoint (triton 2."},
	} {
		srv := plan.Server{Kind: "tfserving", URL: "127.0.0.1:" + c.port, Protocol: c.proto, Timeout: 5 * time.Second, TensorFormat: plan.TensorAuto}
		m := plan.Model{Alias: "half_plus_two", Name: "half_plus_two", Input: plan.Input{Kind: "random"}}
		p := &plan.Plan{Servers: []plan.Server{srv}, Models: []plan.Model{m}, Points: []plan.Point{{ID: "half_plus_two/c=1", Model: m.Alias, Protocol: c.proto,
			SharedMemory: plan.ShmNone, BatchSize: 1, Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}}}}
		s, err := tfserving.Kind{}.Open(context.Background(), p, kinds.Env{ConnectTimeout: 10 * time.Second})
		if err == nil {
			s.Close()
		}
		if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not TensorFlow Serving") {
			t.Errorf("%s: err = %v (%s), want exit 2 naming %q", c.proto, err, failure.KindOf(err), c.want)
		} else if testing.Verbose() {
			t.Log(err)
		}
	}
}

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serveModel starts `perfscen serve` with one model on a free loopback
// gRPC port, as a server beside the run (the CI job's Triton), and
// returns its address and process id.
func serveModel(t *testing.T, model string, params ...string) (string, int) {
	t.Helper()
	args := []string{"serve", "--models", model, "--http-port", "-1", "--grpc-port", "0"}
	for _, p := range params {
		args = append(args, "--model-param", p)
	}
	cmd := exec.Command(perfscenBin(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`Started GRPCInferenceService at (\S+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatal("perfscen serve exited before listening")
		}
		return a, cmd.Process.Pid
	case <-time.After(60 * time.Second):
		t.Fatal("perfscen serve did not start within 60s")
	}
	return "", 0
}

// A server on the same machine is found from its listening socket, and
// every window records its CPU time and run-queue delay per inference
// and its work in units of the probe's kernel; the same server named by
// its pid file is the same process. A pid file that names no process is
// exit 3; one that holds no number is exit 2 at its key.
func TestServerProcessFoundAndNamed(t *testing.T) {
	addr, pid := serveModel(t, "mlp_reference")
	dir := t.TempDir()
	body := func(process string) string {
		return fmt.Sprintf(`version: 1
name: process
server:
  url: %s
  protocol: grpc
%s
models:
  - name: mlp_reference
    batch_size: 8
measurement:
  window: 500ms
  stability: 50%%
  max_trials: 3
  trials: 3
  allow_unstable: true
`, addr, process)
	}
	for _, tc := range []struct {
		name, process, want string
	}{
		{"found", "", fmt.Sprintf("process %d (perfscen) and its children, found listening on %s", pid, addr)},
		{"pid file", "  process: {pid_file: serve.pid}", fmt.Sprintf("process %d (perfscen) and its children, named by", pid)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "serve.pid"), []byte(fmt.Sprintf("%d\n", pid)), 0o644); err != nil {
				t.Fatal(err)
			}
			sc := writeScenario(t, dir, "process.yaml", body(tc.process))
			out := filepath.Join(dir, tc.name+".json")
			code, stdout, stderr := perfscen(t, "run", sc, "--no-baseline", "--out", out)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			run := readRun(t, out)
			if !strings.Contains(run.Environment.Server.Process, tc.want) {
				t.Errorf("environment.server.process = %q, want %q", run.Environment.Server.Process, tc.want)
			}
			p := run.Points[0]
			figs := p.FigureMetrics()
			ps := figs.Process
			if ps == nil || ps.CPUUs <= 0 || ps.RunQueueUs == nil || ps.Work == nil || *ps.Work <= 0 || ps.Inferences <= 0 {
				t.Fatalf("process figures %+v; run notes %q, point notes %q, windows %+v", ps, run.Notes, p.Notes, p.Windows)
			}
			with := 0
			for _, tr := range p.Trials {
				if tr.Metrics.Process != nil && tr.Metrics.Process.Inferences > 0 {
					with++
				}
			}
			if with == 0 {
				t.Errorf("no trial has process figures")
			}
			if !strings.Contains(stdout, "Server process: CPU ") {
				t.Errorf("the console's point block has no server process line:\n%s", stdout)
			}
		})
	}
	t.Run("pid file of no process", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "gone.pid"), []byte("999999999\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		sc := writeScenario(t, dir, "gone.yaml", body("  process: {pid_file: gone.pid}"))
		code, stdout, stderr := perfscen(t, "run", sc, "--no-baseline", "--out-dir", t.TempDir())
		if code != 3 || !strings.Contains(stdout+stderr, "server.process.pid_file") || !strings.Contains(stdout+stderr, "process 999999999 is not running on this machine") {
			t.Errorf("exit %d, want 3 naming the process:\n%s\n%s", code, stdout, stderr)
		}
	})
	t.Run("pid file without a number", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "bad.pid"), []byte("triton\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		sc := writeScenario(t, dir, "bad.yaml", body("  process: {pid_file: bad.pid}"))
		code, stdout, stderr := perfscen(t, "run", sc, "--no-baseline", "--out-dir", t.TempDir())
		if code != 2 || !strings.Contains(stdout+stderr, `bad.yaml:`) || !strings.Contains(stdout+stderr, `holds "triton", not a process id`) {
			t.Errorf("exit %d, want 2 at the key:\n%s\n%s", code, stdout, stderr)
		}
	})
}

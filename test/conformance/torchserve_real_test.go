package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/testbin"
	"github.com/perfscen/perfscen/runner/result"
)

// The torchserve kind against the real TorchServe 0.12.0 (CPU build, its
// model tiny: torch.nn.Linear(4, 2)) shared beside the checkout as
// ../shared/torchserve: started on free ports with its own worker ports
// and state directory, driven end to end through the perfscen binary,
// and stopped with SIGTERM whatever happens. Without the folder the test
// says so once and skips.

// torchserveDir is the shared TorchServe folder, or a skip.
func torchserveDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	roots := []string{root}
	// A git worktree's shared folder is its main checkout's neighbour.
	if b, err := os.ReadFile(filepath.Join(root, ".git")); err == nil {
		if gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok && strings.Contains(gitdir, string(filepath.Separator)+"worktrees"+string(filepath.Separator)) {
			roots = append(roots, filepath.Dir(filepath.Dir(filepath.Dir(gitdir))))
		}
	}
	for _, r := range roots {
		dir := filepath.Join(r, "..", "shared", "torchserve")
		if _, err := os.Stat(filepath.Join(dir, "run-torchserve")); err == nil {
			if pkgs := torchserveMissing(dir, "/usr/share/java", os.Stat, exec.LookPath, pythonHas); len(pkgs) > 0 {
				t.Skipf("SKIPPED: conformance against the real TorchServe 0.12.0 did not run: its Debian runtime is not installed; run: apt-get install -y %s (../shared/torchserve/README.md; make test installs them as root: scripts/deps.sh)", strings.Join(pkgs, " "))
			}
			return dir
		}
	}
	t.Skipf("SKIPPED: conformance against the real TorchServe 0.12.0 did not run: ../shared/torchserve not found beside %s (its README names the Debian packages make test installs: scripts/deps.sh)", strings.Join(roots, " or "))
	return ""
}

// torchserveMissing lists the Debian packages the shared TorchServe needs
// and this machine lacks: the jars run-torchserve puts on its classpath
// (read from the script itself, its SYSJARS list of jar and package), a
// java, and the Python modules its workers import. A machine with the
// folder but not its runtime skips with one line naming what to install,
// rather than failing the README's test command.
func torchserveMissing(dir, javaDir string, stat func(string) (os.FileInfo, error), lookPath func(string) (string, error), hasModule func(string) bool) []string {
	var pkgs []string
	add := func(p string) {
		if !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	if _, err := stat("/usr/bin/java"); err != nil {
		if _, err := lookPath("java"); err != nil {
			add("openjdk-17-jre-headless")
		}
	}
	script, err := os.ReadFile(filepath.Join(dir, "run-torchserve"))
	if err == nil {
		if _, list, ok := strings.Cut(string(script), "SYSJARS=\""); ok {
			list, _, _ = strings.Cut(list, "\"")
			for line := range strings.SplitSeq(list, "\n") {
				f := strings.Fields(line)
				if len(f) != 2 {
					continue
				}
				if _, err := stat(filepath.Join(javaDir, f[0]+".jar")); err != nil {
					add(f[1])
				}
			}
		}
	}
	for _, m := range [][2]string{{"torch", "python3-torch"}, {"psutil", "python3-psutil"}, {"yaml", "python3-yaml"}} {
		if !hasModule(m[0]) {
			add(m[1])
		}
	}
	return pkgs
}

// pythonHas says whether Debian's python3 imports module.
func pythonHas(module string) bool {
	return exec.Command("/usr/bin/python3", "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)", module).Run() == nil
}

// realTorchServe is a running TorchServe and its API addresses.
type realTorchServe struct {
	inference, management, metrics, grpc string
	state                                string
	cmd                                  *exec.Cmd
	exited                               chan error
}

// freePorts returns n TCP ports free on 127.0.0.1 now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var lns []net.Listener
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// workerBase finds a port p with p … p+3 free: TorchServe's frontend
// talks to each worker it starts on the next port from p.
func workerBase(t *testing.T) int {
	t.Helper()
	for range 50 {
		p := freePorts(t, 1)[0]
		if p+4 > 65535 {
			continue
		}
		ok := true
		for q := p + 1; q < p+4 && ok; q++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(q))
			if err != nil {
				ok = false
				continue
			}
			ln.Close()
		}
		if ok {
			return p
		}
	}
	t.Fatal("no four consecutive free ports for TorchServe's workers")
	return 0
}

// startTorchServe starts TorchServe and waits for its first successful
// prediction (its /ping says Healthy seconds before the worker has loaded
// the model). It is stopped with SIGTERM when the test ends.
func startTorchServe(t *testing.T, dir string) *realTorchServe {
	t.Helper()
	p := freePorts(t, 5)
	ts := &realTorchServe{
		inference: fmt.Sprintf("127.0.0.1:%d", p[0]), management: fmt.Sprintf("127.0.0.1:%d", p[1]),
		metrics: fmt.Sprintf("127.0.0.1:%d", p[2]), grpc: fmt.Sprintf("127.0.0.1:%d", p[3]),
		state: t.TempDir(), exited: make(chan error, 1),
	}
	logf, err := os.Create(filepath.Join(ts.state, "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	ts.cmd = exec.Command(filepath.Join(dir, "run-torchserve"), "--state-dir", ts.state,
		"--inference-port", strconv.Itoa(p[0]), "--management-port", strconv.Itoa(p[1]), "--metrics-port", strconv.Itoa(p[2]),
		"--grpc-inference-port", strconv.Itoa(p[3]), "--grpc-management-port", strconv.Itoa(p[4]),
		"--worker-port-base", strconv.Itoa(workerBase(t)))
	ts.cmd.Stdout, ts.cmd.Stderr = logf, logf
	ts.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := ts.cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("starting TorchServe: %v", err)
	}
	go func() { ts.exited <- ts.cmd.Wait(); logf.Close() }()
	t.Cleanup(func() { ts.stop(t) })
	deadline := time.Now().Add(5 * time.Minute)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		status, body, err := ts.predict(`{"data": [1, 2, 3, 4]}`)
		if err == nil && status == http.StatusOK {
			t.Logf("TorchServe answered its first prediction: %s", body)
			return ts
		}
		select {
		case err := <-ts.exited:
			ts.exited <- err
			t.Fatalf("TorchServe exited while starting (%v):\n%s", err, ts.logTail())
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			t.Fatalf("TorchServe gave no successful prediction within 5 minutes (last: %d %s %v):\n%s", status, body, err, ts.logTail())
		}
	}
}

func (ts *realTorchServe) predict(body string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+ts.inference+"/predictions/tiny", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// stop sends SIGTERM and waits for the frontend (its workers exit with
// it); after 30 s the whole process group is killed.
func (ts *realTorchServe) stop(t *testing.T) {
	select {
	case err := <-ts.exited:
		ts.exited <- err
		return
	default:
	}
	_ = ts.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-ts.exited:
		ts.exited <- err
	case <-time.After(30 * time.Second):
		t.Errorf("TorchServe did not stop within 30s of SIGTERM; killing its process group")
		_ = syscall.Kill(-ts.cmd.Process.Pid, syscall.SIGKILL)
		ts.exited <- <-ts.exited
	}
}

func (ts *realTorchServe) logTail() string {
	b, _ := os.ReadFile(filepath.Join(ts.state, "stdout.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// manage calls the management API.
func (ts *realTorchServe) manage(t *testing.T, method, path string) string {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+ts.management+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return string(b)
}

// counter reads one ts_* series from the metrics API.
func (ts *realTorchServe) counter(t *testing.T, metric, version string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + ts.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	re := regexp.MustCompile(`(?m)^` + metric + `\{model_name="tiny",model_version="` + regexp.QuoteMeta(version) + `",[^}]*\} ([0-9.eE+-]+)$`)
	m := re.FindSubmatch(b)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// tinyData are request bodies in every form the kind sends, each with
// tiny's reply (torch.nn.Linear(4, 2), seed 0, rounded to 6 decimals).
const tinyData = `{
  "data": [
    {"json": {"data": [1, 2, 3, 4]}},
    {"json": [0, 0, 0, 0], "content_type": "application/octet-stream"},
    {"TORCHSERVE_INPUT": ["request.json"]},
    {"file": "request.json"},
    {"text": "[1, 2, 3, 4]"},
    {"json": {"data": [0, 0, 0, 0]}, "part": "body", "content_type": "application/json"}
  ],
  "validation_data": [
    {"json": {"output": [-2.218118, 1.763946]}},
    {"json": {"output": [-0.044372, 0.132306]}},
    {"json": {"output": [-2.218118, 1.763946]}},
    {"text": "{\"output\": [-2.218118, 1.763946]}"},
    {"json": {"output": [-2.2181180, 1.7639460]}},
    {"json": {"output": [-0.044372, 0.132306]}}
  ]
}`

// scenarioFor writes a short scenario against ts: model (and version),
// 48 predictions at concurrency 2.
func scenarioFor(t *testing.T, dir, name, url, block, model, version, data string) string {
	t.Helper()
	v := ""
	if version != "" {
		v = fmt.Sprintf("\n    version: %q", version)
	}
	y := fmt.Sprintf(`version: 1
name: %s
server:
  kind: torchserve
  url: %s
  timeout: 30s
%s
models:
  - name: %s%s
    input_data: %s
    validate_outputs: true
    float_tolerance: 1e-6
load:
  mode: iterations
  concurrency: 2
  iterations: 48
thresholds:
  - errors == 0
`, name, url, block, model, v, data)
	p := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runPerfscen(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(testbin.Perfscen(t), args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

func readRun(t *testing.T, path string) *result.Run {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	run, err := result.Decode(path, b)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestRealTorchServe(t *testing.T) {
	tsDir := torchserveDir(t)
	ts := startTorchServe(t, tsDir)
	work := t.TempDir()
	for name, body := range map[string]string{
		"request.json": `{"data": [1, 2, 3, 4]}`,
		"tiny.json":    tinyData,
		"bad.json":     `{"data": [{"json": {"data": [1, 2, 3]}}]}`,
		"half.json":    `{"data": [{"json": {"data": [1, 2, 3]}}, {"json": {"data": [1, 2, 3, 4]}}]}`,
	} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	block := fmt.Sprintf("  torchserve: {management_url: %s, metrics_url: %s}", ts.management, ts.metrics)

	// JSON, octet-stream, perf_analyzer's multipart part, a file, text and
	// a named part, each reply validated; the server's figures are its
	// metrics API's counters for the series the requests went to.
	for _, version := range []string{"", "1.0"} {
		t.Run("bodies and server figures version="+version, func(t *testing.T) {
			label := version
			if label == "" {
				label = "default"
			}
			before := ts.counter(t, "ts_inference_requests_total", label)
			beforeUs := ts.counter(t, "ts_inference_latency_microseconds", label)
			sc := scenarioFor(t, work, "tiny"+strings.ReplaceAll(version, ".", ""), "http://"+ts.inference, block, "tiny", version, "tiny.json")
			code, out := runPerfscen(t, work, "run", "-q", "--out", "r.json", "--no-baseline", sc)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			run := readRun(t, filepath.Join(work, "r.json"))
			if s := run.Environment.Server; s.Name != "torchserve" || s.Version != "0.12.0" || strings.Join(s.Extensions, ",") != "management,metrics" {
				t.Errorf("server info %+v", s)
			}
			p := run.Points[0]
			m := p.Summary
			if m.Requests != 48 || m.Errors != 0 || p.Validation.Checked != 48 || p.Validation.Mismatches != 0 {
				t.Errorf("requests %d errors %d validation %+v (%v)", m.Requests, m.Errors, p.Validation, p.Errors.First)
			}
			n := ts.counter(t, "ts_inference_requests_total", label) - before
			us := ts.counter(t, "ts_inference_latency_microseconds", label) - beforeUs
			if n != 48 || m.Server == nil || m.Server.RequestCount != 48 {
				t.Fatalf("TorchServe counted %v predictions under %q; perfscen's server figures %+v", n, label, m.Server)
			}
			if avg := us / n; m.Server.AvgRequestUs < avg*0.99 || m.Server.AvgRequestUs > avg*1.01 || m.Server.QueueUs > m.Server.AvgRequestUs {
				t.Errorf("server request time %.0f µs (queue %.0f), TorchServe's counters give %.0f µs", m.Server.AvgRequestUs, m.Server.QueueUs, avg)
			}
		})
	}

	t.Run("unknown model", func(t *testing.T) {
		sc := scenarioFor(t, work, "nosuch", ts.inference, block, "nosuch", "", "tiny.json")
		code, out := runPerfscen(t, work, "run", "-q", "--no-baseline", "--out", "x.json", sc)
		if code != 2 || !strings.Contains(out, `model "nosuch" (alias nosuch) is not registered at TorchServe`) || !strings.Contains(out, "registered: tiny") {
			t.Errorf("exit %d\n%s", code, out)
		}
	})

	t.Run("unknown version", func(t *testing.T) {
		sc := scenarioFor(t, work, "badversion", ts.inference, block, "tiny", "9.9", "tiny.json")
		code, out := runPerfscen(t, work, "run", "-q", "--no-baseline", "--out", "x.json", sc)
		if code != 2 || !strings.Contains(out, "Model version: 9.9 does not exist for model: tiny") {
			t.Errorf("exit %d\n%s", code, out)
		}
	})

	t.Run("model without workers", func(t *testing.T) {
		ts.manage(t, http.MethodPost, "/models?url=tiny.mar&model_name=tiny0&initial_workers=0&synchronous=true")
		defer ts.manage(t, http.MethodDelete, "/models/tiny0")
		sc := scenarioFor(t, work, "noworkers", ts.inference, block, "tiny0", "", "tiny.json")
		code, out := runPerfscen(t, work, "run", "-q", "--no-baseline", "--out", "x.json", sc)
		if code != 2 || !strings.Contains(out, `model "tiny0" (alias tiny0) has no workers`) {
			t.Errorf("exit %d\n%s", code, out)
		}
	})

	t.Run("wrong port", func(t *testing.T) {
		for addr, want := range map[string]string{
			ts.management: "is TorchServe's management API",
			ts.metrics:    "is TorchServe's metrics API",
			ts.grpc:       "speaks HTTP/2 only, as gRPC ports do",
		} {
			sc := scenarioFor(t, work, "wrongport", addr, block, "tiny", "", "tiny.json")
			code, out := runPerfscen(t, work, "run", "-q", "--no-baseline", "--out", "x.json", sc)
			if code != 2 || !strings.Contains(out, want) {
				t.Errorf("%s: exit %d\n%s", addr, code, out)
			}
		}
	})

	// The handler fails on a body tiny cannot take (3 values, not 4): some
	// requests fail, are measured as errors, and the threshold fails
	// (exit 1); when every request fails, nothing could be measured (exit
	// 3), with TorchServe's own words.
	t.Run("handler failures", func(t *testing.T) {
		sc := scenarioFor(t, work, "half", ts.inference, block, "tiny", "", "half.json")
		code, out := runPerfscen(t, work, "run", "-q", "--no-baseline", "--out", "half.out.json", sc)
		if code != 1 || !strings.Contains(out, "errors == 0") {
			t.Errorf("half bad: exit %d\n%s", code, out)
		}
		run := readRun(t, filepath.Join(work, "half.out.json"))
		// Each of the two workers sends one of the two bodies over and
		// over; which finishes more of the 48 is the machine's business.
		p := run.Points[0]
		if e := p.Errors; e.Count == 0 || e.Count+p.Summary.Requests != 48 || len(e.First) == 0 || !strings.Contains(e.First[0], "503: InternalServerException: Prediction failed") {
			t.Errorf("errors %+v, successes %d", e, p.Summary.Requests)
		}
		sc = scenarioFor(t, work, "bad", ts.inference, block, "tiny", "", "bad.json")
		code, out = runPerfscen(t, work, "run", "-q", "--no-baseline", "--out", "x.json", sc)
		if code != 3 || !strings.Contains(out, "no request succeeded") || !strings.Contains(out, "InternalServerException: Prediction failed") {
			t.Errorf("all bad: exit %d\n%s", code, out)
		}
	})

	// Last: the server stops, and a run can no longer measure (exit 3).
	t.Run("server gone", func(t *testing.T) {
		ts.stop(t)
		sc := scenarioFor(t, work, "gone", ts.inference, block, "tiny", "", "tiny.json")
		code, out := runPerfscen(t, work, "run", "-q", "--no-baseline", "--out", "x.json", "--connect-timeout", "2s", sc)
		if code != 3 || !strings.Contains(out, "not ready within") {
			t.Errorf("exit %d\n%s", code, out)
		}
	})
}

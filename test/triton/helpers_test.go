//go:build linux

package triton

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/shm"
	"github.com/perfscen/perfscen/internal/testbin"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// outcome is one perfscen run: exit code, console output, result file.
type outcome struct {
	code int
	out  string
	res  *result.Run
	pid  int
}

// runScenario writes the scenario body and the files beside it into a
// fresh directory and runs `perfscen run` on it. In body, {{HTTP}},
// {{GRPC}} and {{METRICS}} are the server's addresses, {{LIB}}, {{REPO}}
// and {{BACKENDS}} its C API library, model repository and backends.
func runScenario(t *testing.T, body string, files map[string]string) outcome {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	body = expand(body)
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	cmd := exec.Command(testbin.Perfscen(t), "run", "--no-baseline", "-q", "--out", "res.json", "s.yaml")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &buf, &buf
	err := cmd.Run()
	o := outcome{out: buf.String()}
	if cmd.Process != nil {
		o.pid = cmd.Process.Pid
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		o.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "res.json")); err == nil {
		o.res = &result.Run{}
		if err := json.Unmarshal(b, o.res); err != nil {
			t.Fatalf("result file: %v", err)
		}
	}
	return o
}

func expand(s string) string {
	r := strings.NewReplacer("{{HTTP}}", tri.HTTP, "{{GRPC}}", tri.GRPC, "{{METRICS}}", tri.Metrics,
		"{{LIB}}", triDir+"/lib/libtritonserver.so", "{{REPO}}", repo, "{{BACKENDS}}", triDir+"/backends")
	return r.Replace(s)
}

// wantCode fails the test when the run did not exit with code.
func (o outcome) wantCode(t *testing.T, code int) {
	t.Helper()
	if o.code != code {
		t.Fatalf("exit %d, want %d\n%s", o.code, code, o.out)
	}
}

// point returns the result's point with id.
func (o outcome) point(t *testing.T, id string) result.Point {
	t.Helper()
	if o.res == nil {
		t.Fatalf("no result file\n%s", o.out)
	}
	var ids []string
	for _, p := range o.res.Points {
		if p.ID == id {
			return p
		}
		ids = append(ids, p.ID)
	}
	t.Fatalf("no point %s among %v", id, ids)
	return result.Point{}
}

// wantClean checks a point measured n requests, all successful, every
// response validated when validated is set, with the server's own
// breakdown of those requests.
func wantClean(t *testing.T, p result.Point, n int64, validated bool) {
	t.Helper()
	if p.Status != result.PointStable || p.Summary.Requests != n || p.Errors.Count != 0 {
		t.Errorf("%s: status %s, %d requests (want %d), errors %+v", p.ID, p.Status, p.Summary.Requests, n, p.Errors)
	}
	if validated && (p.Validation.Checked != n || p.Validation.Mismatches != 0) {
		t.Errorf("%s: validation %+v, want %d checked without a mismatch", p.ID, p.Validation, n)
	}
	s := p.Summary.Server
	if s == nil {
		t.Errorf("%s: no server-side figures", p.ID)
		return
	}
	if s.RequestCount != n || s.ComputeInferUs <= 0 || s.AvgRequestUs < s.QueueUs+s.ComputeInferUs {
		t.Errorf("%s: server figures %+v: want %d requests, a compute time, and a request time that holds queue and compute", p.ID, *s, n)
	}
}

// noRegionsLeft checks Triton holds no shared-memory region and the run's
// process left nothing in /dev/shm.
func noRegionsLeft(t *testing.T, o outcome) {
	t.Helper()
	for _, proto := range []plan.Protocol{plan.ProtocolHTTP, plan.ProtocolGRPC} {
		st, err := tritonClient(t, proto).SystemSharedMemoryStatus(ctxT(t), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(st) != 0 {
			t.Errorf("%s: Triton still has regions registered: %+v", proto, st)
		}
	}
	entries, _ := os.ReadDir(shm.Dir)
	prefix := shm.Prefix + strconv.Itoa(o.pid) + "_"
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			t.Errorf("left behind %s/%s", shm.Dir, e.Name())
		}
	}
}

func tritonClient(t *testing.T, proto plan.Protocol) client.Client {
	t.Helper()
	addr := tri.HTTP
	if proto == plan.ProtocolGRPC {
		addr = tri.GRPC
	}
	c, err := client.New(context.Background(), client.Options{Protocol: proto, URL: addr, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// ints is a JSON list of n copies of v, or of v, v+1, … with step.
func ints(n, v, step int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(v + i*step))
	}
	b.WriteByte(']')
	return b.String()
}

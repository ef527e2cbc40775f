package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/runner/plan"
)

// The output of plan for each example is pinned; the shm sweep example
// has perf_analyzer's --concurrency-range 8:128:8, 16 points.
func TestPlanGolden(t *testing.T) {
	for _, name := range []string{"triton-grpc-shm-sweep", "engine-comparison", "quickstart", "triton-trt-vs-onnx"} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "plan", "@scenarios/"+name+".yaml")
			if code != exitcode.OK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if strings.ContainsAny(out, "│┌\x1b") {
				t.Error("box drawing or colour escapes in non-terminal output")
			}
			golden(t, "testdata/plan-"+name+".golden", out)
		})
	}
}

func TestPlanShmSweepHas16Points(t *testing.T) {
	code, out, errOut := runCLI(t, "plan", "@scenarios/triton-grpc-shm-sweep.yaml")
	if code != exitcode.OK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows := regexp.MustCompile(`(?m)^\| trt +\| trt/c=(\d+) +\| grpc +\| system `).FindAllStringSubmatch(out, -1)
	if len(rows) != 16 || rows[0][1] != "8" || rows[15][1] != "128" {
		t.Errorf("want 16 rows c=8..128, got %d:\n%s", len(rows), out)
	}
	if !strings.Contains(out, "16 points, 1 model,") {
		t.Errorf("summary line missing:\n%s", out)
	}
}

func TestPlanJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "plan", "--json", "@scenarios/engine-comparison.yaml")
	if code != exitcode.OK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Points) != 4 || p.Points[0].Group == 0 || p.Points[0].Group != p.Points[1].Group {
		t.Errorf("want 4 points, the first two interleaved: %+v", p.Points)
	}
}

func TestPlanInvalid(t *testing.T) {
	code, out, errOut := runCLI(t, "plan", "@scenario/testdata/invalid/three-mistakes.yaml")
	if code != exitcode.Invalid || out != "" || strings.Count(errOut, "\n") != 3 {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}

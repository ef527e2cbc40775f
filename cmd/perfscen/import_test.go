package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/runner/result"
)

func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string
		stderr   string
		points   int
		sourceIs string
	}{
		{"log", []string{"import", "../../internal/importer/testdata/multi.log", "-o", out}, exitcode.OK, "imported 2 point(s) from 1 file(s) (perf_analyzer-log)", "", 2, "perf_analyzer-log"},
		{"csv", []string{"import", "--model", "inception", "../../internal/importer/testdata/default.csv", "-o", out}, exitcode.OK, "imported 4 point(s)", "", 4, "perf_analyzer-csv"},
		{"genai-perf", []string{"import", "--model", "llama", "--concurrency", "8", "../../internal/importer/testdata/genai_perf.csv", "-o", out}, exitcode.OK, "imported 1 point(s) from 1 file(s) (genai-perf-csv)", "", 1, "genai-perf-csv"},
		{"genai-perf without load", []string{"import", "--model", "llama", "../../internal/importer/testdata/genai_perf.csv", "-o", out}, exitcode.Invalid, "", "pass --concurrency N or --request-rate R", 0, ""},
		{"csv over grpc", []string{"import", "--model", "inception", "--protocol", "grpc", "../../internal/importer/testdata/default.csv", "-o", out}, exitcode.OK, "imported 4 point(s)", "", 4, "perf_analyzer-csv"},
		{"unknown protocol", []string{"import", "--model", "inception", "--protocol", "ftp", "../../internal/importer/testdata/default.csv", "-o", out}, exitcode.Invalid, "", `invalid argument "ftp" for "--protocol" flag: protocol "ftp" is neither http nor grpc`, 0, ""},
		{"csv without model", []string{"import", "../../internal/importer/testdata/default.csv", "-o", out}, exitcode.Invalid, "", "pass --model", 0, ""},
		{"missing file", []string{"import", filepath.Join(dir, "nope.csv"), "-o", out}, exitcode.Invalid, "", "reading perf_analyzer output", 0, ""},
		{"no args", []string{"import"}, exitcode.Invalid, "", "requires at least 1 arg", 0, ""},
		{"torchserve csv", []string{"import", "--model", "tiny", "--service-kind", "torchserve", "../../internal/importer/testdata/torchserve.csv", "-o", out}, exitcode.OK, "imported 3 point(s)", "", 3, "perf_analyzer-csv"},
		{"dynamic grpc log", []string{"import", "../../internal/importer/testdata/dynamic_grpc_sweep.log", "-o", out}, exitcode.OK, "imported 2 point(s)", "", 2, "perf_analyzer-log"},
		{"unknown service kind", []string{"import", "--model", "m", "--service-kind", "torch", "../../internal/importer/testdata/torchserve.csv", "-o", out}, exitcode.Invalid, "", `service kind "torch" is not one of perf_analyzer's`, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
			}
			if tt.points == 0 {
				return
			}
			r, err := result.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Points) != tt.points || r.Source != tt.sourceIs || r.Environment.PerfscenVersion != version {
				t.Errorf("result: %d points, source %q, version %q", len(r.Points), r.Source, r.Environment.PerfscenVersion)
			}
		})
	}
}

// perfscen's own CSV carries each point's status: an unstable point
// imported stays unstable, so baseline update --from refuses it without
// --force (it was "imported", and recorded as if it were a measurement to
// trust).
func TestImportOwnCSVKeepsUnstable(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "run.csv")
	const body = "Concurrency,Inferences/Second,Client Send,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,Status\n" +
		"1,98.5,40,0,10100,10400,10500,10900,10150,stable\n" +
		"2,171.2,41,0,11500,12800,13300,14900,11680,unstable\n"
	if err := os.WriteFile(csv, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	if code, _, errOut := runCLI(t, "import", "--model", "simple", csv, "-o", out); code != exitcode.OK {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 2 || r.Points[0].Status != result.PointImported || r.Points[1].Status != result.PointUnstable {
		t.Fatalf("statuses: %+v", r.Points)
	}
	base := filepath.Join(dir, "b.json")
	code, _, errOut := runCLI(t, "baseline", "update", "--from", out, "--baseline", base)
	if code != exitcode.Invalid || !strings.Contains(errOut, "point simple/c=2 is unstable") || !strings.Contains(errOut, "--force") {
		t.Fatalf("update without --force: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(base); err == nil {
		t.Errorf("%s written by a refused update", base)
	}
	if code, _, errOut := runCLI(t, "baseline", "update", "--from", out, "--baseline", base, "--force"); code != exitcode.OK {
		t.Fatalf("update --force: exit %d: %s", code, errOut)
	}
}

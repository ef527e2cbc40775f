package conformance

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TorchServe's gRPC inference API measured with the generic kind grpc:
// the .proto files are TorchServe's own, taken from its frontend jar when
// the test runs (never committed), with the google/rpc/status.proto they
// import from Debian's common-protos jar, which TorchServe's frontend needs
// to run anyway (its README lists libgoogle-common-protos-java).

// extractProto copies one entry of a jar (a zip) to dir/name.
func extractProto(t *testing.T, jar, entry, dir, name string) {
	t.Helper()
	zr, err := zip.OpenReader(jar)
	if err != nil {
		t.Fatalf("opening %s: %v", jar, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name != entry {
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s holds no %s", jar, entry)
}

// commonProtosJar is Debian's googleapis common protos jar: the one
// run-torchserve puts on the frontend's classpath.
const commonProtosJar = "/usr/share/java/proto-google-common-protos.jar"

func TestRealTorchServeGRPCWithKindGRPC(t *testing.T) {
	tsDir := torchserveDir(t)
	if _, err := os.Stat(commonProtosJar); err != nil {
		t.Fatalf("%v: TorchServe's frontend runs only with it (Debian package libgoogle-common-protos-java)", err)
	}
	ts := startTorchServe(t, tsDir)
	work := t.TempDir()
	protos := filepath.Join(work, "protos")
	extractProto(t, filepath.Join(tsDir, "lib", "torchserve-frontend.jar"), "proto/inference.proto", protos, "inference.proto")
	extractProto(t, commonProtosJar, "google/rpc/status.proto", protos, "google/rpc/status.proto")

	// input is map<string, bytes>: protojson writes bytes in base64.
	// "[1,2,3,4]" and tiny's reply {"output": [-2.218118, 1.763946]}.
	data := `{"data": [
  {"message": {"model_name": "tiny", "input": {"data": "WzEsMiwzLDRd"}},
   "expected": {"prediction": "eyJvdXRwdXQiOiBbLTIuMjE4MTE4LCAxLjc2Mzk0Nl19"}}
]}`
	if err := os.WriteFile(filepath.Join(work, "tiny-grpc.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	scenario := fmt.Sprintf(`version: 1
name: torchserve-grpc
server:
  kind: grpc
  url: %s
  timeout: 30s
  grpc:
    method: org.pytorch.serve.grpc.inference.InferenceAPIsService/Predictions
    proto_files: [inference.proto]
    import_paths: [protos]
models:
  - name: tiny
    input_data: tiny-grpc.json
    validate_outputs: true
load:
  mode: iterations
  concurrency: 2
  iterations: 48
thresholds:
  - errors == 0
`, ts.grpc)
	sc := filepath.Join(work, "torchserve-grpc.yaml")
	if err := os.WriteFile(sc, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}

	before := ts.counter(t, "ts_inference_requests_total", "default")
	code, out := runPerfscen(t, work, "run", "-q", "--out", "r.json", "--no-baseline", sc)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	run := readRun(t, filepath.Join(work, "r.json"))
	p := run.Points[0]
	if m := p.Summary; m.Requests != 48 || m.Errors != 0 || p.Validation.Checked != 48 || p.Validation.Mismatches != 0 {
		t.Errorf("requests %d errors %d validation %+v (%v)", m.Requests, m.Errors, p.Validation, p.Errors.First)
	}
	// Kind grpc sends the first call of the data once before the load
	// (a declared but unimplemented method is refused then), and its
	// empty-message probe fails (model_name is required), which TorchServe
	// does not count: 48 measured + 1.
	if n := ts.counter(t, "ts_inference_requests_total", "default") - before; n != 48+1 {
		t.Errorf("TorchServe counted %v predictions; perfscen measured %d (+1 before the load)", n, p.Summary.Requests)
	}

	// A model TorchServe lacks: every call fails with TorchServe's
	// INTERNAL and its words; nothing could be measured.
	bad := `{"data": [{"message": {"model_name": "nosuch", "input": {"data": "WzEsMiwzLDRd"}}}]}`
	if err := os.WriteFile(filepath.Join(work, "tiny-grpc.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = runPerfscen(t, work, "run", "-q", "--out", "x.json", "--no-baseline", sc)
	if code != 3 || !strings.Contains(out, "Model not found: nosuch") {
		t.Errorf("unknown model: exit %d\n%s", code, out)
	}
}

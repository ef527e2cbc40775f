package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/runner"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
)

// Kind grpc against software nobody here wrote: grpc-go's own example
// servers (the helloworld greeter, route_guide, and the reflection
// example serving the greeter and echo), built from the grpc-go
// examples module at a pinned version. The examples module carries
// replace directives, so it is built through a wrapper module of its own
// (go install pkg@version refuses it); the module cache and the build
// cache (GOCACHE) keep every build after the first to linking only.

const grpcExamplesVersion = "v0.0.0-20260825154716-030ee8becb20"

// grpcExample is one example server, built for one test.
type grpcExample struct {
	bin    string // the server binary
	module string // the examples module's source, for its .proto files
}

var exampleServers = map[string]string{
	"greeter":    "google.golang.org/grpc/examples/helloworld/greeter_server",
	"routeguide": "google.golang.org/grpc/examples/route_guide/server",
	"reflection": "google.golang.org/grpc/examples/features/reflection/server",
}

// buildExample builds the example server name in a wrapper module in a
// temporary folder. It skips the test (one loud line) only when the build
// cannot run at all: no go command, or no module proxy to fetch the
// pinned module from; a build that fails otherwise fails the test.
func buildExample(t *testing.T, name string) grpcExample {
	t.Helper()
	if testing.Short() {
		t.Skip("SKIP: grpc-go example servers are not built in -short mode; kind grpc's conformance against them did not run")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("SKIP: no go command on PATH to build grpc-go's example servers; kind grpc's conformance against them did not run")
	}
	dir := t.TempDir()
	mod := "module perfscen.test/grpcexamples\n\ngo 1.26\n\nrequire google.golang.org/grpc/examples " + grpcExamplesVersion + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return strings.TrimSpace(out.String()), err
	}
	pkg := exampleServers[name]
	bin := filepath.Join(dir, name)
	if out, err := run("build", "-o", bin, pkg); err != nil {
		if unfetchable(out) || ctx.Err() != nil {
			t.Skipf("SKIP: grpc-go's example server %s@%s cannot be built here (%v: %s); kind grpc's conformance against it did not run", pkg, grpcExamplesVersion, err, lastLine(out))
		}
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	src, err := run("list", "-m", "-f", "{{.Dir}}", "google.golang.org/grpc/examples")
	if err != nil || src == "" {
		t.Fatalf("locating the examples module: %v: %s", err, src)
	}
	return grpcExample{bin: bin, module: src}
}

// unfetchable recognises a build that failed for want of the module proxy.
func unfetchable(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "connection refused", "i/o timeout", "GOPROXY=off",
		"module lookup disabled", "proxyconnect", "TLS handshake timeout", "network is unreachable", "Forbidden"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// startExample runs an example server on a free port until the test ends.
func startExample(t *testing.T, ex grpcExample, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(ex.bin, fmt.Sprintf("-port=%d", port))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s server output:\n%s", name, logs.String())
		}
	})
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// runGRPCScenario writes a scenario (and its files) into a fresh folder
// and runs it; the readiness wait covers the server's start.
func runGRPCScenario(t *testing.T, yaml string, files map[string]string) (*result.Run, error) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := scenario.LoadPlan(path, os.Getenv)
	if err != nil {
		t.Fatalf("loading the scenario: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return runner.Run(ctx, p, runner.Options{ConnectTimeout: 30 * time.Second})
}

// checkPoints asserts every point answered every call, and that replies
// were checked without a difference where asked.
func checkPoints(t *testing.T, run *result.Run, checked map[string]bool) {
	t.Helper()
	if len(run.Points) == 0 {
		t.Fatal("no points measured")
	}
	for _, p := range run.Points {
		if p.Errors.Count > 0 || p.Summary.Requests == 0 {
			t.Errorf("%s: %d requests, %d errors %v", p.ID, p.Summary.Requests, p.Errors.Count, p.Errors.First)
		}
		if checked[p.Model] && (p.Validation.Checked == 0 || p.Validation.Mismatches > 0) {
			t.Errorf("%s: validation %+v", p.ID, p.Validation)
		}
	}
}

const iterations = `
load: {mode: iterations, iterations: 20}
sweep: {concurrency: [2]}
`

func TestGRPCExamplesGreeterFromProtoFiles(t *testing.T) {
	ex := buildExample(t, "greeter")
	addr := startExample(t, ex, "greeter")
	protos := filepath.Join(ex.module, "helloworld", "helloworld")
	run, err := runGRPCScenario(t, fmt.Sprintf(`version: 1
server:
  kind: grpc
  url: grpc://%s
  grpc:
    method: helloworld.Greeter/SayHello
    proto_files: [helloworld.proto]
    import_paths: [%q]
models:
  - {name: hello, input_data: hello.json, validate_outputs: true}
`, addr, protos)+iterations, map[string]string{
		"hello.json": `{"data": [{"message": {"name": "perfscen"}, "expected": {"message": "Hello perfscen"}},
		                         {"message": {"name": "gRPC"}, "expected_fields": {"message": "Hello gRPC"}}]}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkPoints(t, run, map[string]bool{"hello": true})

	// The greeter offers no reflection: asking for it is the scenario's
	// mistake, said before any load.
	_, err = runGRPCScenario(t, fmt.Sprintf("version: 1\nserver: {kind: grpc, url: %q, grpc: {method: helloworld.Greeter/SayHello}}\nmodels: [{name: hello, input_data: zero}]\n", addr)+iterations, nil)
	if err == nil || failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), "offers no server reflection") {
		t.Errorf("reflection from the greeter: %v", err)
	}
}

// route_guide.proto is an edition 2023 file; its four methods are one of
// each shape.
func TestGRPCExamplesRouteGuide(t *testing.T) {
	ex := buildExample(t, "routeguide")
	addr := startExample(t, ex, "routeguide")
	protos := filepath.Join(ex.module, "route_guide", "routeguide")
	run, err := runGRPCScenario(t, fmt.Sprintf(`version: 1
server:
  kind: grpc
  url: %s
  grpc:
    proto_files: [route_guide.proto]
    import_paths: [%q]
    methods:
      feature: routeguide.RouteGuide/GetFeature
      list: routeguide.RouteGuide/ListFeatures
      record: routeguide.RouteGuide/RecordRoute
      chat: routeguide.RouteGuide/RouteChat
models:
  - {name: feature, input_data: feature.json, validate_outputs: true}
  - {name: list, input_data: list.json, validate_outputs: true}
  - {name: record, input_data: record.json, validate_outputs: true}
  - {name: chat, input_data: chat.json}
`, addr, protos)+iterations, map[string]string{
		"feature.json": `{"data": [{"message": {"latitude": 409146138, "longitude": -746188906},
		  "expected": {"name": "Berkshire Valley Management Area Trail, Jefferson, NJ, USA", "location": {"latitude": 409146138, "longitude": -746188906}}}]}`,
		"list.json": `{"data": [{"message": {"lo": {"latitude": 400000000, "longitude": -750000000}, "hi": {"latitude": 420000000, "longitude": -730000000}},
		  "expected_fields": {"[0].name": "Patriots Path, Mendham, NJ 07945, USA"}}]}`,
		"record.json": `{"data": [{"messages": [{"latitude": 407838351, "longitude": -746143763}, {"latitude": 408122808, "longitude": -743999179}, {"latitude": 413628156, "longitude": -749015468}],
		  "expected_fields": {"point_count": 3, "feature_count": 3}}]}`,
		"chat.json": `{"data": [{"messages": [{"location": {"latitude": 1, "longitude": 1}, "message": "first"}, {"location": {"latitude": 1, "longitude": 1}, "message": "second"}]}]}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkPoints(t, run, map[string]bool{"feature": true, "list": true, "record": true})
	for _, p := range run.Points {
		switch p.Model {
		case "list", "chat":
			// Streams: replies counted, the first timed.
			if p.Summary.Responses <= p.Summary.Requests || p.Summary.FirstResponseAvgUs <= 0 {
				t.Errorf("%s: %d replies to %d calls, first after %.0f us", p.ID, p.Summary.Responses, p.Summary.Requests, p.Summary.FirstResponseAvgUs)
			}
		}
	}
}

func TestGRPCExamplesReflection(t *testing.T) {
	ex := buildExample(t, "reflection")
	addr := startExample(t, ex, "reflection")
	run, err := runGRPCScenario(t, fmt.Sprintf(`version: 1
server:
  kind: grpc
  url: %s
  grpc:
    reflection: true
    methods:
      hello: helloworld.Greeter/SayHello
      echo: grpc.examples.echo.Echo/UnaryEcho
models:
  - {name: hello, input_data: hello.json, validate_outputs: true}
  - {name: echo, input_data: echo.json, validate_outputs: true}
`, addr)+iterations, map[string]string{
		"hello.json": `{"data": [{"message": {"name": "reflection"}, "expected": {"message": "Hello reflection"}}]}`,
		"echo.json":  `{"data": [{"message": {"message": "hi"}, "expected": {"message": "hi"}}]}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkPoints(t, run, map[string]bool{"hello": true, "echo": true})

	refused := []struct{ method, want string }{
		// In the descriptors, not implemented by the server.
		{"grpc.examples.echo.Echo/ServerStreamingEcho", "does not implement grpc.examples.echo.Echo/ServerStreamingEcho: its first call (the empty message) was answered UNIMPLEMENTED"},
		// Not in the descriptors: the service's methods are listed.
		{"grpc.examples.echo.Echo/Echo", "has no method Echo (methods: UnaryEcho, ServerStreamingEcho (server streaming), ClientStreamingEcho (client streaming), BidirectionalStreamingEcho (bidi streaming))"},
		{"routeguide.RouteGuide/GetFeature", "does not serve routeguide.RouteGuide (its reflection lists: grpc.examples.echo.Echo, grpc.reflection.v1.ServerReflection, grpc.reflection.v1alpha.ServerReflection, helloworld.Greeter)"},
	}
	for _, r := range refused {
		_, err := runGRPCScenario(t, fmt.Sprintf("version: 1\nserver: {kind: grpc, url: %q, grpc: {method: %s}}\nmodels: [{name: m, input_data: zero}]\n", addr, r.method)+iterations, nil)
		if err == nil || failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: %v\nwant exit 2 saying %q", r.method, err, r.want)
		}
	}
}

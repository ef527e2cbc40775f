package grpc

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// grpcioServer is a Python grpcio service (Debian's python3-grpcio): an
// echo of its request's bytes on echo.v1.Echo/Say, unary, with no
// reflection, which perfscen describes from a .proto file. It is the
// implementation that answers a call carrying no message UNIMPLEMENTED.
const grpcioServer = `
import sys, grpc
from concurrent import futures
def say(request, context):
    return request
handler = grpc.method_handlers_generic_handler("echo.v1.Echo", {
    "Say": grpc.unary_unary_rpc_method_handler(say),
})
server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
server.add_generic_rpc_handlers((handler,))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(port, flush=True)
sys.stdin.read()
server.stop(0)
`

const echoProto = `syntax = "proto3";
package echo.v1;
message Msg { string text = 1; }
service Echo { rpc Say(Msg) returns (Msg); }
`

// startGrpcio starts the Python grpcio server on a free loopback port and
// returns its address; it skips, saying what to install, where Debian's
// python3-grpcio is missing.
func startGrpcio(t *testing.T) string {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import grpc").Run(); err != nil {
		t.Skipf("SKIPPED: the test against a Python grpcio server did not run: %s cannot import grpc; run: apt-get install -y python3-grpcio (make test installs it as root: scripts/deps.sh)", py)
	}
	cmd := exec.Command(py, "-c", grpcioServer)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the server stops when its stdin ends
		if err := cmd.Wait(); err != nil {
			cmd.Process.Kill()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("the grpcio server did not say its port: %v", err)
	}
	return "127.0.0.1:" + strings.TrimSpace(line)
}

// A Python grpcio service is measured: the preflight probe no longer takes
// grpcio's UNIMPLEMENTED for a call with no message as "the method is not
// served" (every grpcio server was refused, exit 2, before), and a method
// it really lacks is still refused.
func TestGrpcioServer(t *testing.T) {
	addr := startGrpcio(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo.proto"), []byte(echoProto), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := map[string]any{"method": "echo.v1.Echo/Say", "proto_files": []any{"echo.proto"}}
	p := testPlan(dir, plan.Server{URL: addr}, opts,
		jsonModel(t, dir, "say", `{"data": [{"message": {"text": "hi"}, "expected_fields": {"text": "hi"}}]}`))
	s, err := Kind{}.Open(context.Background(), p, kinds.Env{})
	if err != nil {
		t.Fatalf("a grpcio server refused: %v", err)
	}
	out := call(t, s, p, "say", 0, true)
	s.Close()
	if out.Err != nil || out.Mismatch != "" || !out.Checked {
		t.Errorf("the echo: %+v", out)
	}

	opts = map[string]any{"method": "echo.v1.Echo/Shout", "proto_files": []any{"echo.proto"}}
	if err := os.WriteFile(filepath.Join(dir, "echo.proto"), []byte(strings.Replace(echoProto, "rpc Say(Msg) returns (Msg);", "rpc Say(Msg) returns (Msg); rpc Shout(Msg) returns (Msg);", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	p = testPlan(dir, plan.Server{URL: addr}, opts, jsonModel(t, dir, "shout", `{"data": [{"message": {"text": "hi"}}]}`))
	if s, err := (Kind{}).Open(context.Background(), p, kinds.Env{}); err == nil {
		s.Close()
		t.Fatal("a method the grpcio server lacks was accepted")
	} else if !strings.Contains(err.Error(), "does not serve echo.v1.Echo/Shout") {
		t.Errorf("the refusal: %v", err)
	}
}

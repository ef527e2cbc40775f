package grpc

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

func TestLoadConfig(t *testing.T) {
	dir := filepath.Join("some", "scenarios")
	p := &plan.Plan{ScenarioPath: filepath.Join(dir, "s.yaml"),
		Servers: []plan.Server{{Kind: Name, Timeout: 3 * time.Second, Headers: map[string]string{"X-Api-Key": "k"}, Options: map[string]any{
			"method": "pkg.Svc/Call", "methods": map[string]any{"b": "/other.Svc/Get"}, "protoset": "sets/a.protoset",
			"deadline": "250ms", "metadata": map[string]any{"x-team": "a"}}}},
		Models: []plan.Model{{Alias: "a"}, {Alias: "b"}}}
	c, err := loadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.methods["a"].path() != "/pkg.Svc/Call" || c.methods["b"].path() != "/other.Svc/Get" {
		t.Errorf("methods %v", c.methods)
	}
	if c.methodField["b"] != "server.grpc.methods.b" || c.methodField["a"] != "server.grpc.method" {
		t.Errorf("method fields %v", c.methodField)
	}
	if c.protoset != filepath.Join(dir, "sets/a.protoset") || c.reflection {
		t.Errorf("protoset %q, reflection %v", c.protoset, c.reflection)
	}
	if c.deadline != 250*time.Millisecond || c.maxRecv != defaultMaxReceive {
		t.Errorf("deadline %v, max receive %d", c.deadline, c.maxRecv)
	}

	// Without a source, reflection; without a deadline, server.timeout;
	// without import paths, the scenario's folder.
	p.Servers[0].Options = map[string]any{"method": "pkg.Svc/Call"}
	if c, err = loadConfig(p); err != nil || !c.reflection || c.deadline != 3*time.Second || c.importPaths[0] != dir {
		t.Errorf("defaults: %+v %v", c, err)
	}
	p.Servers[0].Options = map[string]any{"method": "pkg.Svc/Call", "proto_files": []any{"a.proto", "/abs/b.proto"}, "import_paths": []any{"protos", "/abs"}}
	if c, err = loadConfig(p); err != nil || c.protoPaths[0] != filepath.Join(dir, "a.proto") || c.protoPaths[1] != "/abs/b.proto" ||
		c.importPaths[0] != filepath.Join(dir, "protos") || c.importPaths[1] != "/abs" || c.protoFiles[0] != "a.proto" {
		t.Errorf("paths: %+v %v", c, err)
	}

	cases := []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{}, "server.grpc: model a has no method: give method (pkg.Service/Method) or methods.a"},
		{map[string]any{"method": "pkg.Svc.Call"}, `server.grpc.method: "pkg.Svc.Call" is not a method: write package.Service/Method`},
		{map[string]any{"method": "pkg.Svc/Ca-ll"}, "server.grpc.method:"},
		{map[string]any{"method": "a/b", "methods": map[string]any{"c": "x.Y/Z"}}, `server.grpc.methods.c: no model has alias "c" (models: a, b)`},
		{map[string]any{"method": "a/b", "methods": map[string]any{"b": "nope"}}, "server.grpc.methods.b:"},
		{map[string]any{"method": "a/b", "import_paths": []any{"x"}}, "server.grpc.import_paths: applies only with proto_files"},
		{map[string]any{"method": "a/b", "reflection": false}, "server.grpc.reflection: is false"},
		{map[string]any{"method": "a/b", "proto_files": []any{"a.proto"}, "protoset": "s"}, "give one source"},
		{map[string]any{"method": "a/b", "deadline": "soon"}, `server.grpc.deadline: "soon" is not a positive duration`},
		{map[string]any{"method": "a/b", "metadata": map[string]any{"X-Team": "a"}}, "server.grpc.metadata.X-Team: metadata keys hold lower-case"},
		{map[string]any{"method": "a/b", "metadata": map[string]any{"grpc-timeout": "1"}}, "reserved for gRPC"},
		{map[string]any{"method": "a/b", "metadata": map[string]any{"x-api-key": "1"}}, "server.grpc.metadata.x-api-key: is also given in server.headers"},
		{map[string]any{"method": "a/b", "max_receive_size": -1}, "server.grpc.max_receive_size: must be > 0"},
		{map[string]any{"method": "a/b", "proto_files": []any{""}}, "server.grpc.proto_files: an empty path"},
	}
	for _, tc := range cases {
		p.Servers[0].Options = tc.opts
		_, err := loadConfig(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestTarget(t *testing.T) {
	for in, want := range map[string]string{"h:1": "h:1", "grpc://h:2": "h:2", "grpcs://h:3/": "h:3", "http://[::1]:4": "[::1]:4"} {
		if got, err := target(in); err != nil || got != want {
			t.Errorf("target(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"h", "grpc://h", "h:1/path", ""} {
		if _, err := target(in); err == nil {
			t.Errorf("target(%q) accepted", in)
		}
	}
}

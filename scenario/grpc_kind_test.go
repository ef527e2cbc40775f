package scenario

import (
	"fmt"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
)

// A gRPC service speaks gRPC only: its points are labelled grpc unless
// the scenario says otherwise (servers of several kinds share one
// protocol label, http by default).
func TestGRPCKindProtocol(t *testing.T) {
	cases := []struct {
		name, src string
		want      plan.Protocol
	}{
		{"one server", `
version: 1
server: {kind: grpc, url: "localhost:50051", grpc: {method: a.B/C}}
models: [{name: m}]
`, plan.ProtocolGRPC},
		{"several grpc servers", `
version: 1
servers:
  a: {kind: grpc, url: "localhost:50051"}
  b: {kind: grpc, url: "localhost:50052"}
models: [{name: a/m}, {name: b/m}]
`, plan.ProtocolGRPC},
		{"with another kind", `
version: 1
servers:
  a: {kind: grpc, url: "localhost:50051"}
  b: {url: "localhost:8000"}
models: [{name: a/m}, {name: b/m}]
`, plan.ProtocolHTTP},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseString(t, tc.src, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Expand(s)
			if err != nil {
				t.Fatal(err)
			}
			for _, pt := range p.Points {
				if pt.Protocol != tc.want {
					t.Errorf("%s: protocol %s, want %s", pt.ID, pt.Protocol, tc.want)
				}
			}
			if p.Server().Kind != "" && p.Server().Options["method"] != "a.B/C" {
				t.Errorf("kind block %v", p.Server().Options)
			}
		})
	}
}

// The default kind, kserve, has its own block (server.kserve) without
// naming the kind; another kind's server may not carry it.
func TestKServeBlock(t *testing.T) {
	s, err := parseString(t, `
version: 1
server: {url: "localhost:8001", protocol: grpc, kserve: {grpc_compression: gzip}}
models: [{name: m}]
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Expand(s)
	if err != nil {
		t.Fatal(err)
	}
	if p.Server().Options["grpc_compression"] != "gzip" {
		t.Errorf("kserve block %v", p.Server().Options)
	}
	s, err = parseString(t, `
version: 1
server: {url: "localhost:8001", kserve: {connections: 4, busy_poll: 100us}}
models: [{name: m}]
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = Expand(s); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p.Server().Options["connections"]) != "4" {
		t.Errorf("kserve block %v", p.Server().Options)
	}
	for _, src := range []string{`
version: 1
server: {kind: tfserving, url: "localhost:8500", kserve: {grpc_compression: gzip}}
models: [{name: m}]
`, `
version: 1
server: {url: "localhost:8001", kserve: {grpc_compression: brotli}}
models: [{name: m}]
`, `
version: 1
server: {url: "localhost:8001", kserve: {connections: -1}}
models: [{name: m}]
`, `
version: 1
server: {url: "localhost:8001", kserve: {connections: 1.5}}
models: [{name: m}]
`, `
version: 1
server: {url: "localhost:8001", kserve: {busy_poll: fast}}
models: [{name: m}]
`} {
		if _, err := parseString(t, src, nil); err == nil {
			t.Errorf("accepted:%s", src)
		}
	}
}

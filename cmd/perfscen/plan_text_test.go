package main

import (
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
)

// What `perfscen plan` says of a server: where it is, or that it starts
// inside perfscen.
func TestServerText(t *testing.T) {
	cases := []struct {
		srv  plan.Server
		want string
	}{
		{plan.Server{URL: "localhost:8000"}, "localhost:8000"},
		{plan.Server{Embedded: true}, "embedded reference server"},
		{plan.Server{Embedded: true, EmbeddedFlavor: "kserve"}, "embedded reference server (kserve)"},
		{plan.Server{Embedded: true, Kind: "torchserve"}, "embedded reference server (torchserve API)"},
		{plan.Server{HTTPURL: "h:8000", GRPCURL: "h:8001"}, "http h:8000, grpc h:8001"},
		{plan.Server{Kind: "triton_c_api"}, "triton_c_api, in process"},
		{plan.Server{Name: "a", Embedded: true, EmbeddedModels: map[string]map[string]string{"delay": {"delay": "10ms"}}},
			"embedded reference server with delay {delay=10ms}"},
	}
	for _, tc := range cases {
		if got := serverText(tc.srv); got != tc.want {
			t.Errorf("serverText(%+v) = %q, want %q", tc.srv, got, tc.want)
		}
	}
}

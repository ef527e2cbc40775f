package kserve

import (
	"fmt"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
)

func TestProtocolsOfPlan(t *testing.T) {
	p := &plan.Plan{Servers: []plan.Server{{Protocol: "http"}}, Points: []plan.Point{{Protocol: "grpc"}, {Protocol: "http"}, {Protocol: "grpc"}}}
	if got := fmt.Sprint(protocols(p)); got != "[grpc http]" {
		t.Fatalf("protocols = %s", got)
	}
	if got := fmt.Sprint(protocols(&plan.Plan{Servers: []plan.Server{{Protocol: "grpc"}}})); got != "[grpc]" {
		t.Fatalf("protocols of an empty plan = %s", got)
	}
}

//go:build linux

package triton

import (
	"strings"
	"testing"
)

// The comparison users want: one model of one Triton build, measured in
// one run through the C API (in perfscen's process) and through gRPC and
// HTTP (the test's tritonserver), trials interleaved. The network path
// costs something at either protocol, and the run says how much, with an
// interval; the C API arm carries the server's own breakdown too.
func TestProtocolCost(t *testing.T) {
	o := runScenario(t, `version: 1
name: protocol-cost
servers:
  capi:
    kind: triton_c_api
    triton_c_api:
      library: {{LIB}}
      model_repository: {{REPO}}
  network:
    http_url: {{HTTP}}
    grpc_url: {{GRPC}}
models:
  - name: capi/identity_fp32
  - name: network/identity_fp32
load:
  concurrency: 1
sweep:
  protocol: [grpc, http]
measurement:
  window: 200ms
  stability: 60%
  max_trials: 4
  trials: 10
  allow_unstable: true
gate:
  max_extra_trials: 6
comparisons:
  - network/identity_fp32.p50 >= capi/identity_fp32.p50
`, nil)
	// On a saturated runner the interleaved trials can stay too spread to
	// decide (exit 4, inconclusive: an honest answer); what must hold
	// either way is that no comparison fails and every ratio shows the
	// network's cost.
	if o.code == 4 {
		t.Logf("INCONCLUSIVE on this machine's load; checking the ratios only:\n%s", o.out)
	} else {
		o.wantCode(t, 0)
	}
	for _, proto := range []string{"grpc", "http"} {
		capi := o.point(t, "capi/identity_fp32/c=1,proto="+proto)
		net := o.point(t, "network/identity_fp32/c=1,proto="+proto)
		if capi.Summary.Server == nil || capi.Errors.Count != 0 || net.Errors.Count != 0 {
			t.Errorf("%s: C API server figures %+v, errors %d and %d", proto, capi.Summary.Server, capi.Errors.Count, net.Errors.Count)
		}
		if capi.Summary.P50Us >= net.Summary.P50Us {
			t.Errorf("%s: in process p50 %.0f us, not below the network's %.0f us", proto, capi.Summary.P50Us, net.Summary.P50Us)
		}
	}
	var checks int
	for _, c := range o.res.Verdict.Checks {
		if c.Kind != "comparison" {
			continue
		}
		checks++
		// Value is the median ratio network ÷ in process.
		if (c.Status != "pass" && !(o.code == 4 && c.Status == "inconclusive")) || c.NoValue || c.Value <= 1 {
			t.Errorf("comparison %s at %s: %s, ratio %.2f: %s", c.Name, c.Point, c.Status, c.Value, c.Message)
		}
	}
	if checks != 2 {
		t.Errorf("%d comparison checks, want one per protocol:\n%s", checks, o.out)
	}
	if !strings.Contains(o.out, "capi/identity_fp32") {
		t.Errorf("the report does not name the C API arm:\n%s", o.out)
	}
}

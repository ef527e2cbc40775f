package tfserving

import (
	"fmt"
	"strings"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// settings are the scenario's server.tfserving block.
type settings struct {
	// SignatureName is the SignatureDef every model runs (default
	// serving_default).
	SignatureName string `json:"signature_name"`
	// RESTFormat is how REST requests carry inputs: row ("instances", the
	// default) or columnar ("inputs").
	RESTFormat string `json:"rest_format"`
}

func readSettings(srv plan.Server) (settings, error) {
	var s settings
	if err := kinds.DecodeOptions(srv, &s); err != nil {
		return s, err
	}
	field := kinds.OptionsField(srv)
	if s.SignatureName == "" {
		s.SignatureName = defaultSignature
	}
	switch s.RESTFormat {
	case "":
		s.RESTFormat = formatRow
	case formatRow, formatColumnar:
	default:
		return s, failure.Invalid(fmt.Errorf("%s.rest_format: %q is neither %s nor %s", field, s.RESTFormat, formatRow, formatColumnar))
	}
	return s, nil
}

// checkPlan refuses what TF Serving has no counterpart for, naming the
// scenario field: they would otherwise be ignored silently.
func checkPlan(p *plan.Plan) error {
	srv := p.Server()
	sf := kinds.ServerField(srv)
	if srv.EmbeddedFlavor != "" {
		return failure.Invalid(fmt.Errorf("%s.embedded_flavor: applies to kind kserve; the embedded server of kind tfserving speaks TF Serving's API", sf))
	}
	if srv.TensorFormat != "" && srv.TensorFormat != plan.TensorAuto {
		return failure.Invalid(fmt.Errorf("%s.tensor_format: applies to kind kserve; TF Serving's REST API has JSON tensors only (and gRPC TensorProto)", sf))
	}
	for _, m := range p.Models {
		if m.Sequence {
			return failure.Invalid(fmt.Errorf("model %s: sequence: TF Serving has no sequence batching (no correlation ids to send)", m.Alias))
		}
	}
	if uses := serverMetricUses(p); len(uses) > 0 {
		return failure.Invalid(fmt.Errorf("%s: TF Serving reports no queue or compute breakdown, so %s would have nothing to judge (its own figures are request counts and latency; gate on the client's latency and throughput)",
			sf, strings.Join(uses, ", ")))
	}
	for _, pt := range p.Points {
		if pt.SharedMemory != "" && pt.SharedMemory != plan.ShmNone {
			return failure.Invalid(fmt.Errorf("point %s: shared_memory %s: TF Serving has no shared-memory API", pt.ID, pt.SharedMemory))
		}
		if pt.Load.Streaming {
			return failure.Invalid(fmt.Errorf("point %s: streaming: TF Serving's Predict is unary (no stream to send on)", pt.ID))
		}
	}
	return nil
}

// serverMetricUses lists the checks on p's models that read a server_*
// figure (queue, compute input/infer/output): TF Serving has none.
func serverMetricUses(p *plan.Plan) []string {
	ours := func(aliases ...string) bool {
		if len(aliases) == 0 {
			return true
		}
		for _, a := range aliases {
			if _, ok := p.Model(a); ok {
				return true
			}
		}
		return false
	}
	isServer := func(m string) bool { return strings.HasPrefix(m, "server_") }
	var out []string
	c := p.Checks
	for _, t := range c.Thresholds {
		if isServer(t.Metric) && ours(t.Selector.Models...) {
			out = append(out, fmt.Sprintf("threshold %q", t.Text))
		}
	}
	for _, cmp := range c.Comparisons {
		if isServer(cmp.Metric) && ours(cmp.Candidate, cmp.Reference) {
			out = append(out, fmt.Sprintf("comparison %q", cmp.Name))
		}
	}
	if b := c.Baseline; b != nil {
		for _, m := range b.Metrics {
			if isServer(m) {
				out = append(out, "baseline metric "+m)
			}
		}
	}
	return out
}

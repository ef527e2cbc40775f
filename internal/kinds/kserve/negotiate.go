package kserve

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
)

// Server metadata extension names (KServe v2 and Triton).
const (
	extBinary   = "binary_tensor_data"
	extStats    = "statistics"
	extSysShm   = "system_shared_memory"
	extCudaShm  = "cuda_shared_memory"
	extConfig   = "model_configuration"
	extSequence = "sequence"
)

// negotiation is what the run does given what the server said it supports:
// decided once, before any model is asked about or any load is sent.
type negotiation struct {
	// noBinary: the server lacks the binary tensor extension, so HTTP
	// tensors (FP16 and BF16 included) travel as JSON.
	noBinary bool
	// useConfig: ask for model configs; without the extension shapes come
	// from model metadata.
	useConfig bool
	// serverStats: read statistics around windows.
	serverStats bool
	notes       []string
}

// negotiate compares what the plan needs with the server's extensions. What
// the scenario needs and the server lacks is exit 2, naming the extension;
// what it lacks and nothing depends on becomes one note.
func negotiate(p *plan.Plan, md *kservev2.ServerMetadata) (negotiation, error) {
	has := func(ext string) bool { return slices.Contains(md.Extensions, ext) }
	n := negotiation{noBinary: !has(extBinary), useConfig: has(extConfig), serverStats: has(extStats)}
	var missing []string
	lacks := func(ext, what string) {
		missing = append(missing, fmt.Sprintf("%s needs the %s extension", what, ext))
	}
	if n.noBinary && p.Server().TensorFormat == plan.TensorBinary && slices.Contains(protocols(p), plan.ProtocolHTTP) {
		lacks(extBinary, "server.tensor_format: binary")
	}
	if !n.serverStats {
		if uses := serverMetricUses(p.Checks); len(uses) > 0 {
			for _, u := range uses {
				lacks(extStats, u)
			}
		} else {
			n.notes = append(n.notes, fmt.Sprintf("%s does not list the %s extension: server-side times (server_*) are not measured", serverName(md), extStats))
		}
	}
	for _, mode := range []struct {
		shm plan.SharedMemory
		ext string
	}{{plan.ShmSystem, extSysShm}, {plan.ShmCUDA, extCudaShm}} {
		if has(mode.ext) {
			continue
		}
		if id := firstPoint(p, func(pt plan.Point) bool { return pt.SharedMemory == mode.shm }); id != "" {
			lacks(mode.ext, fmt.Sprintf("shared_memory: %s (point %s)", mode.shm, id))
		}
	}
	if !has(extSequence) {
		for _, m := range p.Models {
			if m.Sequence {
				lacks(extSequence, fmt.Sprintf("models[%s].sequence: true", m.Alias))
			}
		}
	}
	if !n.useConfig {
		n.notes = append(n.notes, fmt.Sprintf("%s does not list the %s extension: model shapes come from model metadata, a leading -1 taken as the batch dimension", serverName(md), extConfig))
	}
	if len(missing) > 0 {
		return n, failure.Invalid(fmt.Errorf("the scenario needs what %s does not offer (its extensions: [%s]): %s",
			serverName(md), strings.Join(md.Extensions, ", "), strings.Join(missing, "; ")))
	}
	return n, nil
}

// serverMetricUses lists the checks that read a server_* figure, which
// only the statistics extension provides.
func serverMetricUses(c plan.Checks) []string {
	var out []string
	for _, t := range c.Thresholds {
		if isServerMetric(t.Metric) {
			out = append(out, fmt.Sprintf("threshold %q", t.Text))
		}
	}
	for _, cmp := range c.Comparisons {
		if isServerMetric(cmp.Metric) {
			out = append(out, fmt.Sprintf("comparison %q", cmp.Name))
		}
	}
	if b := c.Baseline; b != nil {
		for _, m := range b.Metrics {
			if isServerMetric(m) {
				out = append(out, fmt.Sprintf("baseline metric %s", m))
			}
		}
	}
	return out
}

func isServerMetric(m string) bool { return strings.HasPrefix(m, "server_") }

func firstPoint(p *plan.Plan, f func(plan.Point) bool) string {
	for _, pt := range p.Points {
		if f(pt) {
			return pt.ID
		}
	}
	return ""
}

func serverName(md *kservev2.ServerMetadata) string {
	name := md.Name
	if name == "" {
		name = "the server"
	}
	if md.Version != "" {
		name += " " + md.Version
	}
	return name
}

// readServerMetadata asks the server once who it is and what it supports.
func readServerMetadata(ctx context.Context, c client.Client, p *plan.Plan) (*kservev2.ServerMetadata, error) {
	timeout := p.Server().Timeout
	if timeout <= 0 {
		timeout = kinds.DefaultConnectTimeout
	}
	mctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	md, err := c.ServerMetadata(mctx)
	if err != nil {
		return nil, failure.Env(fmt.Errorf("reading server metadata: %w", err))
	}
	return md, nil
}

// applyNegotiation rebuilds the HTTP client when the server has no binary
// tensor extension; clients are cheap to build and hold no state yet.
func applyNegotiation(ctx context.Context, p *plan.Plan, clients map[plan.Protocol]client.Client, urls map[plan.Protocol]string, n negotiation, dial dialFunc) error {
	old, ok := clients[plan.ProtocolHTTP]
	if !ok || !n.noBinary {
		return nil
	}
	opts, err := clientOptions(p, plan.ProtocolHTTP, urls[plan.ProtocolHTTP], dial)
	if err != nil {
		return err
	}
	opts.NoBinaryTensors = true
	c, err := client.New(ctx, opts)
	if err != nil {
		return failure.Invalid(fmt.Errorf("server: %w", err))
	}
	old.Close()
	clients[plan.ProtocolHTTP] = c
	return nil
}

// checkJSONOutputs refuses tensor_format: json where the server has the
// binary extension and a model has FP16 or BF16 outputs: such a server
// (Triton) refuses to write them as JSON, so every request would fail.
// Inputs of those types are sent binary there; outputs cannot be, because
// a request that lists no outputs asks for all of them in one format.
func checkJSONOutputs(p *plan.Plan, specs map[string]inputdata.ModelSpec, n negotiation) error {
	if p.Server().TensorFormat != plan.TensorJSON || n.noBinary || !slices.Contains(protocols(p), plan.ProtocolHTTP) {
		return nil
	}
	for _, m := range p.Models {
		for _, o := range specs[m.Alias].Outputs {
			if !tensor.JSONAllowed(o.DataType) {
				return failure.Invalid(fmt.Errorf("server.tensor_format: json: model %s output %s is %s, which a server with the binary tensor extension does not send as JSON; use tensor_format auto or binary",
					m.Alias, o.Name, o.DataType))
			}
		}
	}
	return nil
}

package kserve

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// modelSpec asks the server what a model takes. The config is preferred
// (it carries max_batch_size and dims without the batch dimension); servers
// without the model-configuration extension fall back to metadata.
func modelSpec(ctx context.Context, c client.Client, m plan.Model, useConfig bool) (inputdata.ModelSpec, error) {
	md, err := c.ModelMetadata(ctx, m.Name, m.Version)
	if err != nil {
		if uerr := unknownModel(ctx, c, m); uerr != nil {
			return inputdata.ModelSpec{}, uerr
		}
		return inputdata.ModelSpec{}, serverErr(fmt.Sprintf("model %q (alias %s) metadata", m.Name, m.Alias), err)
	}
	spec := inputdata.ModelSpec{Name: m.Name}
	if !useConfig {
		return specFromMetadata(m.Name, md), nil
	}
	cfg, cerr := c.ModelConfig(ctx, m.Name, m.Version)
	if cerr == nil && cfg != nil && len(cfg.Inputs) > 0 {
		spec.MaxBatchSize = cfg.MaxBatchSize
		for _, t := range cfg.Inputs {
			spec.Inputs = append(spec.Inputs, inputdata.TensorSpec{Name: t.Name, DataType: t.DataType, Dims: t.Dims, Optional: t.Optional})
		}
		for _, t := range cfg.Outputs {
			spec.Outputs = append(spec.Outputs, inputdata.TensorSpec{Name: t.Name, DataType: t.DataType, Dims: t.Dims})
		}
		return spec, nil
	}
	return specFromMetadata(m.Name, md), nil
}

// unknownModel tells a model the server does not have from a server that
// failed to answer: Triton answers an unknown model with 400 over HTTP, so
// the status alone cannot say. When the repository index is readable and
// lacks the model, it is the scenario's mistake (exit 2), named with the
// models the server does have.
func unknownModel(ctx context.Context, c client.Client, m plan.Model) error {
	idx, err := c.RepositoryIndex(ctx)
	if err != nil {
		return nil
	}
	var names []string
	for _, r := range idx {
		if r.Name == m.Name {
			return nil
		}
		if !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	sort.Strings(names)
	list := strings.Join(names, ", ")
	if list == "" {
		list = "none"
	}
	return failure.Invalid(fmt.Errorf("model %q (alias %s) is not on the server; its models: %s", m.Name, m.Alias, list))
}

// serverErr classifies a failed call: the server saying "no such model" is
// the scenario's mistake (exit 2); anything else is the environment (exit 3).
// Servers say it in different ways: 404 or gRPC NotFound, or (Triton and
// plain KServe v2 servers without a repository index) 400 or
// InvalidArgument with a message naming the model as unknown.
func serverErr(what string, err error) error {
	if modelNotFound(err) {
		return failure.Invalid(fmt.Errorf("%s: %w", what, err))
	}
	return failure.Env(fmt.Errorf("%s: %w", what, err))
}

// notFoundText matches the ways servers word "there is no such model":
// Triton's "Request for unknown model: 'x' is not found", KServe's
// "model x does not exist" / "Model with name x does not exist",
// MLServer's "Model x with version y not found".
var notFoundText = regexp.MustCompile(`(?i)unknown model|not found|does not exist|no such model|no model named`)

// modelNotFound reports whether err is the server saying it has no such
// model.
func modelNotFound(err error) bool {
	var se *transport.ServerError
	if !errors.As(err, &se) {
		return false
	}
	if se.HTTPStatus == 404 || se.GRPCCode == codes.NotFound {
		return true
	}
	return (se.HTTPStatus == 400 || se.GRPCCode == codes.InvalidArgument || se.GRPCCode == codes.Unavailable) && notFoundText.MatchString(se.Message)
}

// inputKey identifies one prepared input set: data depends on the model,
// the batch size and the shape set of a point.
func inputKey(pt plan.Point) string {
	return fmt.Sprintf("%s|b=%d|s=%s", pt.Model, pt.BatchSize, pt.ShapeSet)
}

// loadInputs prepares and checks every input set the plan needs before any
// request is sent; a mismatch is exit 2 naming file, step and tensor.
func loadInputs(p *plan.Plan, specs map[string]inputdata.ModelSpec) (map[string]*inputdata.Data, error) {
	models := map[string]plan.Model{}
	for _, m := range p.Models {
		models[m.Alias] = m
	}
	out := map[string]*inputdata.Data{}
	for _, pt := range p.Points {
		key := inputKey(pt)
		if _, done := out[key]; done {
			continue
		}
		m := models[pt.Model]
		src := inputdata.Source{
			Kind:         m.Input.Kind,
			Paths:        m.Input.Paths,
			BatchSize:    pt.BatchSize,
			Shapes:       pt.Shapes,
			StringLength: m.Input.StringLength,
			StringData:   m.Input.StringData,
			Seed:         1,
		}
		d, err := inputdata.Load(specs[pt.Model], src)
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("input data for model %s (point %s): %w", m.Alias, pt.ID, err))
		}
		out[key] = d
	}
	return out, nil
}

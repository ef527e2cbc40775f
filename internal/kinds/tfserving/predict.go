package tfserving

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// prepared are one point's requests, by flat step index, built once
// before any load and shared read-only by the point's callers.
type prepared struct {
	data *inputdata.Data
	grpc []*pb.PredictRequest
	rest [][]byte
}

// inputKey identifies one prepared input set: data depend on the model,
// the batch size and the shape set of a point.
func inputKey(pt *plan.Point) string {
	return fmt.Sprintf("%s|b=%d|s=%s", pt.Model, pt.BatchSize, pt.ShapeSet)
}

func preparedKey(pt *plan.Point) string {
	return inputKey(pt) + "|" + string(cmpProto(pt.Protocol))
}

// prepare loads every point's input data against its model's signature
// and writes every request, so a file, a shape or a request format that
// does not fit stops the run before the first request (exit 2).
func (s *server) prepare() error {
	data := map[string]*inputdata.Data{}
	for i := range s.plan.Points {
		pt := &s.plan.Points[i]
		ms, ok := s.models[pt.Model]
		if !ok {
			return failure.Invalid(fmt.Errorf("plan: point %s names no model", pt.ID))
		}
		proto := cmpProto(pt.Protocol)
		if proto == plan.ProtocolHTTP {
			if err := restTypes(ms); err != nil {
				return failure.Invalid(fmt.Errorf("model %s (point %s): %w", ms.model.Alias, pt.ID, err))
			}
		}
		key := inputKey(pt)
		d, done := data[key]
		if !done {
			m := ms.model
			src := inputdata.Source{Kind: m.Input.Kind, Paths: m.Input.Paths, BatchSize: pt.BatchSize, Shapes: pt.Shapes,
				StringLength: m.Input.StringLength, StringData: m.Input.StringData, Seed: 1}
			var err error
			if d, err = inputdata.Load(ms.spec, src); err != nil {
				return failure.Invalid(fmt.Errorf("input data for model %s (point %s; signature %s takes %s): %w", m.Alias, pt.ID, ms.sig.Name, ms.sig.inputNames(), err))
			}
			data[key] = d
		}
		if _, done := s.prepared[preparedKey(pt)]; done {
			continue
		}
		pr := &prepared{data: d}
		for _, st := range d.Streams {
			for _, step := range st {
				if err := pr.add(proto, ms, s.set.RESTFormat, step); err != nil {
					return failure.Invalid(fmt.Errorf("model %s (point %s), request from %s: %w", ms.model.Alias, pt.ID, step.Origin, err))
				}
			}
		}
		s.prepared[preparedKey(pt)] = pr
	}
	return nil
}

// restTypes refuses half-precision tensors over REST: TF Serving's JSON
// tensors have no such types.
func restTypes(ms *modelState) error {
	for _, group := range [][]sigTensor{ms.sig.Inputs, ms.sig.Outputs} {
		for _, t := range group {
			if !restDType(t.DataType) {
				return fmt.Errorf("signature %s: %s is %s, which TF Serving's REST API cannot carry; use protocol: grpc", ms.sig.Name, t.Alias, t.DataType)
			}
		}
	}
	return nil
}

func (pr *prepared) add(proto plan.Protocol, ms *modelState, format string, step inputdata.Step) error {
	if proto == plan.ProtocolHTTP {
		body, err := encodePredictBody(ms.ref.Signature, format, step.Inputs)
		if err != nil {
			return err
		}
		pr.rest = append(pr.rest, body)
		return nil
	}
	req := &pb.PredictRequest{ModelSpec: ms.ref.spec(), Inputs: make(map[string]*pb.TensorProto, len(step.Inputs))}
	for _, t := range step.Inputs {
		tp, err := toProto(t)
		if err != nil {
			return err
		}
		req.Inputs[t.Name] = tp
	}
	pr.grpc = append(pr.grpc, req)
	return nil
}

// Point hands out a point's prepared requests.
func (s *server) Point(_ context.Context, pt *plan.Point) (kinds.Point, error) {
	ms, ok := s.models[pt.Model]
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("model alias %q is not in the plan's models", pt.Model))
	}
	pr, ok := s.prepared[preparedKey(pt)]
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("no requests prepared for point %s", pt.ID))
	}
	p := &point{model: ms, pr: pr, stats: s.stats, tolerance: ms.model.FloatTolerance, format: s.set.RESTFormat,
		entrypoint: "GRPC", path: predictPath(ms.ref)}
	switch cmpProto(pt.Protocol) {
	case plan.ProtocolGRPC:
		p.grpc, _ = s.apis[plan.ProtocolGRPC].(*grpcAPI)
	default:
		p.rest, _ = s.apis[plan.ProtocolHTTP].(*restAPI)
		p.entrypoint = "REST"
	}
	if p.grpc == nil && p.rest == nil {
		return nil, failure.Invalid(fmt.Errorf("point %s: no client for protocol %s", pt.ID, pt.Protocol))
	}
	return p, nil
}

// point is one plan point's load; read-only once built.
type point struct {
	model      *modelState
	pr         *prepared
	grpc       *grpcAPI
	rest       *restAPI
	path       string
	format     string
	stats      *promStats
	entrypoint string // the latency histogram's label for this protocol
	tolerance  float64
}

func (p *point) Data() *inputdata.Data { return p.pr.data }

func (p *point) Close() error { return nil }

// Stats reads TF Serving's own figures for the model from its Prometheus
// endpoint; without metrics_url there are none.
func (p *point) Stats(ctx context.Context) (kinds.Counters, error) {
	if p.stats == nil {
		return kinds.Counters{}, kinds.ErrNoStats
	}
	fams, err := p.stats.families(ctx)
	if err != nil {
		return kinds.Counters{}, err
	}
	return promCounters(fams, p.model.ref.Name, p.entrypoint), nil
}

// NewCaller: callers hold no state of their own; the clients' connections
// are shared.
func (p *point) NewCaller(context.Context, int) (kinds.Caller, error) { return caller{p}, nil }

type caller struct{ p *point }

func (caller) Close() error { return nil }

// Call sends the step's prepared request. Outputs are decoded and
// compared only when asked, after the completion stamp; a REST reply is
// otherwise only checked to be a prediction.
func (c caller) Call(ctx context.Context, clock func() time.Duration, r *kinds.Request, out *kinds.Outcome) {
	p := c.p
	var got []tensor.Tensor
	if p.grpc != nil {
		req := p.pr.grpc[r.Index]
		out.Sent = clock()
		resp, wait, err := p.grpc.predict(ctx, req)
		out.Done = clock()
		if err != nil {
			out.Err = err
			return
		}
		out.Wait, out.SendRecv = wait, max(out.Done-out.Sent-wait, 0)
		if len(resp.GetOutputs()) == 0 && len(p.model.sig.Outputs) > 0 {
			out.Err = &transport.ProtocolError{Protocol: plan.ProtocolGRPC, Op: "predict", Err: fmt.Errorf("the reply has no outputs")}
			return
		}
		if !r.Check || len(r.Step.Expected) == 0 {
			return
		}
		for _, e := range r.Step.Expected {
			tp, ok := resp.GetOutputs()[e.Name]
			if !ok {
				continue // validate reports the missing output
			}
			t, err := fromProto(e.Name, tp)
			if err != nil {
				out.Checked, out.Mismatch = true, err.Error()
				return
			}
			got = append(got, t)
		}
	} else {
		body := p.pr.rest[r.Index]
		out.Sent = clock()
		rp, wait, err := p.rest.predict(ctx, p.path, body)
		out.Done = clock()
		if err != nil {
			out.Err = err
			return
		}
		out.Wait, out.SendRecv = wait, max(out.Done-out.Sent-wait, 0)
		key := []byte(`"predictions"`)
		if p.format == formatColumnar {
			key = []byte(`"outputs"`)
		}
		if !bytes.Contains(rp.body, key) {
			out.Err = &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: "predict", Err: fmt.Errorf("the reply has no %s: %s", key, excerpt(rp))}
			return
		}
		if !r.Check || len(r.Step.Expected) == 0 {
			return
		}
		got, err = decodePredictReply(rp.body, p.format, p.model.sig.outputSpecs())
		if err != nil {
			out.Checked, out.Mismatch = true, err.Error()
			return
		}
	}
	out.Checked = true
	out.Mismatch = kinds.CompareTensors(r.Step.Expected, got, p.tolerance)
}

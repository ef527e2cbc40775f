package torchserve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// maxReply bounds a prediction's reply body.
const maxReply = 64 << 20

// prepare reads a model's input data into requests: each step's single
// BYTES "payload" input is the exact body sent (as the openai kind carries
// its bodies), so the engine's cursors walk them like any data.
func prepare(m plan.Model, inference string, header http.Header) (*prepared, error) {
	var reqs []request
	switch m.Input.Kind {
	case inputdata.KindDir:
		r, err := loadDir(m.Input.Paths[0])
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("model %s input: %w", m.Alias, err))
		}
		reqs = r
	default:
		for _, path := range m.Input.Paths {
			r, err := loadFile(path)
			if err != nil {
				return nil, failure.Invalid(fmt.Errorf("model %s input: %w", m.Alias, err))
			}
			reqs = append(reqs, r...)
		}
	}
	pm := &prepared{model: m, reqs: reqs, label: defaultVersionLabel}
	pm.url = inference + "/predictions/" + url.PathEscape(m.Name)
	if m.Version != "" {
		pm.url += "/" + url.PathEscape(m.Version)
		pm.label = m.Version
	}
	steps := make([]inputdata.Step, len(reqs))
	pm.checkers = make([]*checker, len(reqs))
	pm.headers = make([]http.Header, len(reqs))
	for i, r := range reqs {
		steps[i] = inputdata.Step{Origin: r.origin,
			Inputs: []tensor.Tensor{{Name: "payload", DataType: tensor.BYTES, Shape: []int64{1}, Raw: r.body}}}
		h := header.Clone()
		h.Set("Content-Type", r.contentType)
		pm.headers[i] = h
		if r.expect == nil {
			continue
		}
		name := "bytes"
		if r.expect.json {
			name = "json"
		}
		steps[i].Expected = []tensor.Tensor{{Name: name, DataType: tensor.BYTES, Shape: []int64{1}, Raw: r.expect.raw}}
		c, err := newChecker(r.expect, m.FloatTolerance)
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("model %s input: %s: expected reply: %w", m.Alias, r.origin, err))
		}
		pm.checkers[i] = c
	}
	pm.data = &inputdata.Data{Streams: [][]inputdata.Step{steps}, BatchSize: 1}
	return pm, nil
}

// Point hands out the model's prepared requests.
func (s *server) Point(_ context.Context, pt *plan.Point) (kinds.Point, error) {
	pm, ok := s.models[pt.Model]
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("no requests prepared for point %s", pt.ID))
	}
	return &point{s: s, pm: pm}, nil
}

// point is one plan point of a TorchServe model.
type point struct {
	s  *server
	pm *prepared

	mu        sync.Mutex
	successes int64 // predictions answered 200, for the metrics check
	absent    int   // scrapes without TorchServe's counters after successes
}

func (p *point) Data() *inputdata.Data { return p.pm.data }

func (p *point) Close() error { return nil }

// Stats reads the model's ts_* counters for the version label its
// requests are counted under.
func (p *point) Stats(ctx context.Context) (kinds.Counters, error) {
	a := p.s.api
	if a.ep.metrics == "" {
		return kinds.Counters{}, kinds.ErrNoStats
	}
	fams, err := a.scrape(ctx)
	if err != nil {
		return kinds.Counters{}, err
	}
	if !hasCounters(fams) {
		// A fresh TorchServe exports its counters from the first
		// prediction on; still none after predictions succeeded (twice
		// over, as the counter follows the reply) means a metrics API
		// without them (metrics_mode=log).
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.successes > 0 {
			p.absent++
		}
		if p.absent >= 2 {
			return kinds.Counters{}, fmt.Errorf("TorchServe's metrics API at %s has no %s after %d successful predictions (is metrics_mode=prometheus?)", a.ep.metrics, metricRequests, p.successes)
		}
	}
	return countersOf(fams, p.pm.model.Name, p.pm.label), nil
}

func (p *point) NewCaller(context.Context, int) (kinds.Caller, error) {
	c := &caller{p: p}
	c.trace = &httptrace.ClientTrace{
		WroteRequest:         func(httptrace.WroteRequestInfo) { c.wrote = c.clock() },
		GotFirstResponseByte: func() { c.first = c.clock() },
	}
	return c, nil
}

// caller sends one worker's predictions on the point's shared
// connections (one per worker in practice: a worker waits for each reply).
type caller struct {
	p            *point
	trace        *httptrace.ClientTrace
	clock        func() time.Duration
	wrote, first time.Duration
	buf          bytes.Buffer
}

func (c *caller) Close() error { return nil }

// Call posts the step's prepared body. Times: Sent just before the
// request is handed to the transport, Done when the reply body is read;
// Wait runs from the request written to the reply's first byte.
func (c *caller) Call(ctx context.Context, clock func() time.Duration, r *kinds.Request, out *kinds.Outcome) {
	pm := c.p.pm
	if r.Index < 0 || r.Index >= len(pm.reqs) {
		out.Err = fmt.Errorf("torchserve: request index %d out of range (%d requests)", r.Index, len(pm.reqs))
		return
	}
	body := pm.reqs[r.Index].body
	if t := c.p.s.plan.Server().Timeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	c.clock, c.wrote, c.first = clock, -1, -1
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, c.trace), http.MethodPost, pm.url, bytes.NewReader(body))
	if err != nil {
		out.Err = fmt.Errorf("torchserve: building request: %w", err)
		return
	}
	req.Header = pm.headers[r.Index] // read-only: the transport does not modify it
	req.ContentLength = int64(len(body))
	out.Sent = clock()
	resp, err := c.p.s.load.RoundTrip(req)
	if err != nil {
		out.Done = clock()
		out.Err = &transport.TransportError{Protocol: plan.ProtocolHTTP, Op: "predictions", Err: err}
		return
	}
	c.buf.Reset()
	_, err = c.buf.ReadFrom(io.LimitReader(resp.Body, maxReply))
	resp.Body.Close()
	out.Done = clock()
	if err != nil {
		out.Err = &transport.TransportError{Protocol: plan.ProtocolHTTP, Op: "predictions", Err: fmt.Errorf("reading the reply: %w", err)}
		return
	}
	if resp.StatusCode != http.StatusOK {
		out.Err = &transport.ServerError{Protocol: plan.ProtocolHTTP, Op: "predictions", HTTPStatus: resp.StatusCode,
			Message: messageOf(reply{status: resp.StatusCode, body: c.buf.Bytes()})}
		return
	}
	if c.wrote >= 0 && c.first >= c.wrote {
		out.Wait = c.first - c.wrote
		out.SendRecv = out.Done - out.Sent - out.Wait
	} else {
		out.SendRecv = out.Done - out.Sent
	}
	c.p.mu.Lock()
	c.p.successes++
	c.p.mu.Unlock()
	if !r.Check {
		return
	}
	if ch := pm.checkers[r.Index]; ch != nil {
		out.Checked = true
		out.Mismatch = ch.check(c.buf.Bytes())
	}
}

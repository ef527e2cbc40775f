package kserve

import (
	"context"
	"fmt"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
)

// point is one plan point's load; it is read-only once built.
type point struct {
	client   client.Client
	streamer client.Streamer // non-nil for streaming points
	model    plan.Model
	data     *inputdata.Data
	steps    int // flat step count, for per-caller request caches
	timeout  time.Duration
	stats    bool

	shm *shmSet // nil without shared memory

	tolerance float64
}

// Point prepares pt: its client, its input data, and its shared-memory
// regions when it uses them.
func (s *server) Point(ctx context.Context, pt *plan.Point) (kinds.Point, error) {
	m, ok := s.plan.Model(pt.Model)
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("model alias %q is not in the plan's models", pt.Model))
	}
	useShm, rt, err := shmMode(pt.SharedMemory)
	if err != nil {
		return nil, err
	}
	cl, err := s.clientFor(pt.Protocol)
	if err != nil {
		return nil, err
	}
	data, err := s.inputs(pt)
	if err != nil {
		return nil, failure.Invalid(fmt.Errorf("input data: %w", err))
	}
	p := &point{client: cl, model: m, data: data, stats: s.stats, tolerance: m.FloatTolerance, timeout: s.plan.Server().Timeout}
	for _, st := range data.Streams {
		p.steps += len(st)
	}
	if pt.Load.Streaming {
		st, ok := cl.(client.Streamer)
		if !ok {
			return nil, failure.Invalid(fmt.Errorf("streaming needs a gRPC client; protocol %q has no stream", pt.Protocol))
		}
		p.streamer = st
	}
	if useShm {
		spec, ok := s.specs[m.Alias]
		if !ok {
			meta, err := cl.ModelMetadata(ctx, m.Name, m.Version)
			if err != nil {
				return nil, failure.Env(fmt.Errorf("model metadata for shared memory: %w", err))
			}
			spec = specFromMetadata(m.Name, meta)
		}
		sizer := outputSizer{client: cl, streamer: p.streamer, model: m, spec: spec, data: data,
			batch: pt.BatchSize, override: pt.OutputShmSize, timeout: s.plan.Server().Timeout}
		names, sizes := sizer.sizes(ctx)
		s.shmSeq++
		set, err := newShmSet(ctx, cl, rt, fmt.Sprintf("p%d", s.shmSeq-1), data, names, sizes)
		if err != nil {
			return nil, failure.Env(err)
		}
		p.shm = set
	}
	return p, nil
}

func (p *point) Data() *inputdata.Data { return p.data }

func (p *point) Close() error { return p.shm.close() }

// Stats reads the model's cumulative statistics, summed over the versions
// listed (all of them for an empty version, as the server does).
func (p *point) Stats(ctx context.Context) (kinds.Counters, error) {
	if !p.stats {
		return kinds.Counters{}, kinds.ErrNoStats
	}
	list, err := p.client.ModelStatistics(ctx, p.model.Name, p.model.Version)
	if err != nil {
		return kinds.Counters{}, err
	}
	c, ok := pickStats(list, p.model.Name, p.model.Version)
	if !ok {
		return c, fmt.Errorf("the statistics do not list model %s", p.model.Name)
	}
	return c, nil
}

// compare checks got against expected with the model's tolerance; "" when
// they match.
func (p *point) compare(expected, got []tensor.Tensor) string {
	return kinds.CompareTensors(expected, got, p.tolerance)
}

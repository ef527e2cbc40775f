package refserver

import (
	"context"
	"maps"
	"sync/atomic"
	"time"

	"github.com/perfscen/perfscen/internal/procacct"
)

// loadedModel is a model that is serving: its parameters, scheduler,
// engine and statistics.
type loadedModel struct {
	def      *modelDef
	params   atomic.Pointer[modelParams]
	rng      *faultRNG
	stats    *statsRecorder
	sched    *scheduler
	engine   engine
	loadedAt time.Time
	after    afterFunc // waits out stalls, added latency and service times
	// ctx ends when the model is torn down; executions that serve several
	// requests run under it rather than under any one request's context.
	ctx    context.Context
	cancel context.CancelFunc
	kv     map[string]string // the parameter map it was loaded with, for its config
	// devices are the server's shared devices (ParamDevice); nil in
	// tests that load a model alone.
	devices *devices
	// acct, when set, counts the model's inferences beside its instance
	// threads' time (Options.AccountThreads).
	acct *procacct.Threads
}

func loadModel(def *modelDef, p modelParams, kv map[string]string, after afterFunc, acct *procacct.Threads) *loadedModel {
	m := &loadedModel{
		after:    after,
		def:      def,
		kv:       maps.Clone(kv),
		rng:      newFaultRNG(p.seed),
		stats:    newStatsRecorder(def.name, modelVersion),
		engine:   def.newEngine(),
		loadedAt: time.Now(),
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.params.Store(&p)
	var join func() func()
	if acct != nil {
		m.acct = acct
		join = func() func() { return acct.Join(def.name) }
	}
	m.sched = newScheduler(m.policy(&p), m.execute, after, join)
	return m
}

// policy is the scheduler configuration the model's config implies.
func (m *loadedModel) policy(p *modelParams) batchPolicy {
	bp := batchPolicy{instances: p.instanceCount, maxBatch: max(m.def.maxBatchSize, 1)}
	if m.def.maxBatchSize > 0 && !m.def.sequence && p.dynamicBatching {
		bp.dynamic = true
		bp.delay = p.maxQueueDelay
		for _, s := range p.preferred {
			if s <= m.def.maxBatchSize {
				bp.preferred = append(bp.preferred, s)
			}
		}
	}
	if m.def.sequence {
		// One instance keeps a sequence's requests in order.
		bp.instances = 1
	}
	return bp
}

// close drains the queue (in-flight requests finish) and stops workers.
func (m *loadedModel) close() {
	m.sched.close()
	m.cancel()
}

// execute runs one batch of jobs; it is the scheduler's exec function.
func (m *loadedModel) execute(batch []*job) {
	now := time.Now()
	live := batch[:0]
	for _, j := range batch {
		j.dequeued = now
		if err := j.ctx.Err(); err != nil {
			j.err = errorf(codeCancelled, "request cancelled before execution: %v", err)
			close(j.done)
			continue
		}
		if j.timeout > 0 && now.Sub(j.enqueued) > j.timeout {
			j.err = errorf(codeUnavailable, "Request timeout expired")
			close(j.done)
			continue
		}
		live = append(live, j)
	}
	if len(live) == 0 {
		return
	}
	p := m.params.Load()
	sizes := make([]int, len(live))
	total := 0
	for i, j := range live {
		sizes[i] = j.batchSize
		total += j.batchSize
	}
	ctx := m.ctx
	if len(live) == 1 {
		ctx = live[0].ctx
	}

	t0 := time.Now()
	eb := &execBatch{inputs: mergeInputs(live, total), jobs: live, batchSize: total, params: p, after: m.after}
	if m.def.name == "delay" {
		eb.jitter = m.rng.jitter(p.delay, p.jitter)
	}
	t1 := time.Now()
	outs, err := m.run(ctx, eb, p)
	t2 := time.Now()
	var split [][]tensorBuf
	if err == nil && !m.def.decoupled {
		split, err = m.split(outs, sizes)
	}
	t3 := time.Now()
	if err == nil {
		m.stats.execution(total, t1.Sub(t0), t2.Sub(t1), t3.Sub(t2))
	}
	if m.acct != nil {
		// Before any reply leaves: a window that sees the replies sees
		// their inferences counted.
		m.acct.Count(m.def.name, total)
	}
	for i, j := range live {
		j.computeInput, j.computeInfer, j.computeOutput = t1.Sub(t0), t2.Sub(t1), t3.Sub(t2)
		if err != nil {
			j.err = err
		} else if split != nil {
			j.outputs = split[i]
		}
		close(j.done)
	}
}

// run is compute_infer: stall, added latency and drift, then the engine.
func (m *loadedModel) run(ctx context.Context, b *execBatch, p *modelParams) (outs []tensorBuf, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errorf(codeInternal, "model %s panicked: %v", m.def.name, r)
		}
	}()
	if p.device != "" && m.devices != nil {
		// The device computes one model's execution at a time: waiting for
		// it is part of compute_infer, as on a GPU shared by two models.
		release, err := m.devices.acquire(ctx, p.device)
		if err != nil {
			return nil, errorf(codeCancelled, "execution cancelled waiting for device %s: %v", p.device, err)
		}
		defer release()
	}
	now := time.Now()
	if err := m.after.sleep(ctx, stallRemaining(m.loadedAt, now, p)+p.addedLatency+driftRemaining(m.loadedAt, now, p)); err != nil {
		return nil, errorf(codeCancelled, "execution cancelled: %v", err)
	}
	outs, err = m.engine.execute(ctx, b)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errorf(codeCancelled, "execution cancelled: %v", err)
		}
		return nil, err
	}
	if len(outs) != len(m.def.outputs) && !m.def.decoupled {
		return nil, errorf(codeInternal, "model %s produced %d outputs, config has %d", m.def.name, len(outs), len(m.def.outputs))
	}
	return outs, nil
}

func (m *loadedModel) split(outs []tensorBuf, sizes []int) ([][]tensorBuf, error) {
	per := make([][]tensorBuf, len(sizes))
	for k := range per {
		per[k] = make([]tensorBuf, len(outs))
	}
	for i, o := range outs {
		parts, err := splitOutput(o, m.def.outputs[i].dtype, sizes)
		if err != nil {
			return nil, errorf(codeInternal, "model %s output %s: %v", m.def.name, m.def.outputs[i].name, err)
		}
		for k := range parts {
			per[k][i] = parts[k]
		}
	}
	return per, nil
}

// submit queues j and waits for its result or for ctx; hang, error and
// drop faults apply here.
func (m *loadedModel) submit(j *job) error {
	p := m.params.Load()
	if p.hang {
		j.markQueued()
		<-j.ctx.Done()
		return errorf(codeCancelled, "request cancelled while model %s hangs: %v", m.def.name, j.ctx.Err())
	}
	fail, drop := m.rng.decide(p)
	j.done = make(chan struct{})
	ok := m.sched.submit(j)
	j.markQueued()
	if !ok {
		return errorf(codeUnavailable, "model %s is unloading", m.def.name)
	}
	select {
	case <-j.done:
	case <-j.ctx.Done():
		return errorf(codeCancelled, "request cancelled: %v", j.ctx.Err())
	}
	switch {
	case j.err != nil:
		return j.err
	case drop:
		return errDropped
	case fail:
		return errorf(codeInternal, "injected failure in model %s (error_rate %g)", m.def.name, p.errorRate)
	}
	return nil
}

func (j *job) markQueued() {
	if j.queued != nil {
		j.queued()
		j.queued = nil
	}
}

package scenario

import (
	"math"

	"github.com/perfscen/perfscen/internal/llmtrace"
	"github.com/perfscen/perfscen/runner/plan"
)

// Defaults of the LLM workload sources.
const (
	// DefaultTraceBlockSize is Mooncake's: its traces' hash_ids name
	// blocks of 512 tokens.
	DefaultTraceBlockSize = 512
	DefaultConversations  = 16
)

// hasTrace says some model replays a trace.
func hasTrace(s *Scenario) bool {
	for _, m := range s.Models {
		if m.Trace != nil {
			return true
		}
	}
	return false
}

// resolveWorkloads reads the models' traces and multi-turn sessions
// (kind openai) once the load is known: a trace is its own schedule, so
// nothing else may set one, and a conversation is driven by one worker
// at a time, so it needs a concurrency.
func resolveWorkloads(s *Scenario, c *collector, r *resolved, dir string) {
	if r.llm == nil {
		return
	}
	traced := hasTrace(s)
	r.traceLoads = make([]*plan.Load, len(s.Models))
	for i, m := range s.Models {
		p := path{"models", i}
		pm := &r.models[i]
		if traced && m.Trace == nil {
			c.at(p, "replays no trace, but models[%d] does: every model replays one when one does, as a trace is the whole schedule", firstTrace(s))
		}
		if len(workloadSources(m)) > 1 || (r.llm.Endpoint == plan.EndpointEmbeddings && (m.Trace != nil || m.Conversations != nil)) {
			continue // resolveLLMModel said so
		}
		if m.Trace != nil {
			r.traceLoads[i] = resolveTrace(s, c, p.child("trace"), m.Trace, pm, dir)
		}
		if m.Conversations != nil {
			resolveConversations(c, p.child("conversations"), m.Conversations, pm, r)
		}
	}
	if !traced {
		r.traceLoads = nil
		return
	}
	in := s.Load
	for _, x := range []struct {
		given bool
		at    path
	}{
		{in.Mode != "" && in.Mode != string(plan.LoadRequestRate), path{"load", "mode"}},
		{in.Concurrency != 0, path{"load", "concurrency"}},
		{in.RequestRate != 0, path{"load", "request_rate"}},
		{in.Distribution != "", path{"load", "distribution"}},
		{in.RequestIntervals != "", path{"load", "request_intervals"}},
		{in.Iterations != 0, path{"load", "iterations"}},
		{in.WarmupIterations != 0, path{"load", "warmup_iterations"}},
		{len(in.Stages) > 0, path{"load", "stages"}},
		{len(s.Sweep.Concurrency) > 0, path{"sweep", "concurrency"}},
		{len(s.Sweep.RequestRate) > 0, path{"sweep", "request_rate"}},
		{len(s.Sweep.InputTokens) > 0, path{"sweep", "input_tokens"}},
		{len(s.Sweep.OutputTokens) > 0, path{"sweep", "output_tokens"}},
		{len(s.Searches) > 0, path{"searches"}},
		{len(s.Mixes) > 0, path{"mixes"}},
	} {
		if x.given {
			c.atKey(x.at, "does not apply with models[].trace: the trace is the schedule (each request at its timestamp ÷ trace.speedup) and the requests")
		}
	}
}

func firstTrace(s *Scenario) int {
	for i, m := range s.Models {
		if m.Trace != nil {
			return i
		}
	}
	return -1
}

// resolveTrace reads a model's trace and returns its points' load: the
// trace once, open loop, at its own times.
func resolveTrace(s *Scenario, c *collector, p path, in *Trace, pm *plan.Model, dir string) *plan.Load {
	t := &plan.Trace{Path: rel(dir, in.File), BlockSize: in.BlockSize, Speedup: 1, Seed: 1, IgnoreEOS: true,
		Where: c.where(p.child("file"))}
	if t.BlockSize == 0 {
		t.BlockSize = DefaultTraceBlockSize
	}
	if in.Speedup != nil {
		t.Speedup = *in.Speedup
	}
	if in.LengthScale != nil && *in.LengthScale != 1 {
		t.LengthScale = *in.LengthScale
	}
	if in.Seed != nil {
		t.Seed = *in.Seed
	}
	if in.IgnoreEOS != nil {
		t.IgnoreEOS = *in.IgnoreEOS
	}
	tr, err := llmtrace.Read(t.Path)
	if err == nil {
		err = tr.CheckBlocks(t.BlockSize)
	}
	if err != nil {
		c.at(p.child("file"), "%v", err)
		return nil
	}
	t.Requests = len(tr.Requests)
	pm.Trace = t
	gaps, rate := tr.Schedule(t.Speedup)
	if rate == 0 || math.IsInf(rate, 0) {
		c.at(p.child("file"), "every request of the trace arrives at the same time: there is no schedule to replay")
		return nil
	}
	return &plan.Load{Mode: plan.LoadRequestRate, Distribution: plan.TraceSchedule, Rate: rate,
		Intervals: gaps, Iterations: t.Requests, MaxThreads: s.Load.MaxThreads}
}

func resolveConversations(c *collector, p path, in *Conversations, pm *plan.Model, r *resolved) {
	if r.load.Mode != plan.LoadConcurrency {
		c.at(p, "multi-turn sessions need load.mode: concurrency (the number of conversations in flight); mode is %s", r.load.Mode)
	}
	if r.llm.Endpoint != DefaultEndpoint {
		c.at(p, "multi-turn sessions send chat messages: the endpoint must be %s, not %s", DefaultEndpoint, r.llm.Endpoint)
	}
	cv := &plan.Conversations{Count: in.Count, Turns: in.Turns, SystemTokens: in.SystemTokens,
		UserMean: in.UserTokens.Mean, UserStdDev: in.UserTokens.StdDev, Seed: 1}
	if cv.Count == 0 {
		cv.Count = DefaultConversations
	}
	if cv.UserMean == 0 {
		c.at(p.child("user_tokens"), "needs mean")
	}
	if in.Seed != nil {
		cv.Seed = *in.Seed
	}
	if o := in.OutputTokens; o != nil {
		if o.Mean == 0 {
			c.at(p.child("output_tokens"), "needs mean")
		}
		cv.OutputMean, cv.OutputStdDev = o.Mean, o.StdDev
	}
	cv.IgnoreEOS = in.OutputTokens != nil
	if in.IgnoreEOS != nil {
		if *in.IgnoreEOS && in.OutputTokens == nil {
			c.at(p.child("ignore_eos"), "needs output_tokens: without max_tokens a request ignoring end-of-sequence may never end")
		}
		cv.IgnoreEOS = *in.IgnoreEOS
	}
	if in.ThinkTime != "" {
		d, err := ParseDuration(in.ThinkTime)
		if err != nil {
			c.at(p.child("think_time"), "%v", err)
		}
		cv.ThinkTime = d
	}
	pm.Conversations = cv
}

package engine

import (
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

func TestLLMAccHandComputed(t *testing.T) {
	slo := &plan.SLO{TTFT: 100 * ms, ITL: 20 * ms}
	// Three requests over a 2 s window:
	//  A: TTFT 50 ms, chunks at +10, +30 ms; 3 tokens (usage); e2e 90 ms
	//     TPOT = (90-50)/(3-1) = 20 ms → meets both SLOs
	//  B: TTFT 150 ms, one gap 10 ms; 2 tokens (counted chunks); e2e 160 ms
	//     TPOT = 10 ms; TTFT misses the SLO
	//  C: not streamed, 5 tokens from usage; no timing; cannot show the SLO
	reqs := []struct {
		sent, done time.Duration
		ls         llmSample
	}{
		{0, 90 * ms, llmSample{streamed: true, ttft: 50 * ms, gaps: []time.Duration{10 * ms, 30 * ms}, tokens: 3, inTokens: 7, fromUsage: true}},
		{0, 160 * ms, llmSample{streamed: true, ttft: 150 * ms, gaps: []time.Duration{10 * ms}, tokens: 2}},
		{0, 40 * ms, llmSample{tokens: 5, inTokens: 3, fromUsage: true}},
	}
	a := newAcc(0)
	for i := range reqs {
		r := &reqs[i]
		e2e := r.done - r.sent
		if r.ls.streamed && r.ls.tokens > 1 {
			r.ls.tpot = (e2e - r.ls.ttft) / time.Duration(r.ls.tokens-1)
		}
		r.ls.good = meets(slo, &r.ls, e2e)
		r.ls.sloSet = true
		a.add(&sample{sched: r.sent, llm: &r.ls, Outcome: kinds.Outcome{Sent: r.sent, Done: r.done}})
	}
	m := a.metrics(1, 2*time.Second).LLM
	if m == nil {
		t.Fatal("no LLM metrics")
	}
	if m.Streamed != 2 || m.TTFT.Count != 2 || m.TTFT.AvgUs != 100e3 || m.TTFT.MaxUs != 150e3 {
		t.Errorf("TTFT: %+v (streamed %d)", m.TTFT, m.Streamed)
	}
	// Gaps 10, 30, 10 ms: mean 16.67 ms, p50 10 ms.
	if m.ITL.Count != 3 || int(m.ITL.AvgUs) != 16666 || m.ITL.P50Us < 9990 || m.ITL.P50Us > 10010 || m.ITL.MaxUs != 30e3 {
		t.Errorf("ITL: %+v", m.ITL)
	}
	if m.TPOT.Count != 2 || m.TPOT.AvgUs != 15e3 || m.TPOT.MaxUs != 20e3 {
		t.Errorf("TPOT: %+v", m.TPOT)
	}
	if m.OutputTokens != 10 || m.InputTokens != 10 || m.OutputTokensPerSec != 5 {
		t.Errorf("tokens: out %d in %d, %g/s", m.OutputTokens, m.InputTokens, m.OutputTokensPerSec)
	}
	if m.TokensFromUsage != 2 || m.TokensFromChunks != 1 {
		t.Errorf("token sources: usage %d chunks %d", m.TokensFromUsage, m.TokensFromChunks)
	}
	if m.Goodput == nil || *m.Goodput != 0.5 || m.GoodRequests != 1 {
		t.Errorf("goodput %v (%d good), want 0.5/s (1 good)", m.Goodput, m.GoodRequests)
	}
	// Merging two windows pools the figures.
	b := newAcc(0)
	b.merge(a)
	b.merge(a)
	if mm := b.metrics(1, 4*time.Second).LLM; mm.TTFT.Count != 4 || mm.OutputTokensPerSec != 5 || *mm.Goodput != 0.5 {
		t.Errorf("merged: %+v", mm)
	}
}

func TestMeets(t *testing.T) {
	streamed := llmSample{streamed: true, ttft: 80 * ms, tpot: 30 * ms, tokens: 10}
	tests := []struct {
		name string
		slo  *plan.SLO
		ls   llmSample
		e2e  time.Duration
		want bool
	}{
		{"no SLO: goodput not measured", nil, streamed, time.Second, false},
		{"within ttft and itl", &plan.SLO{TTFT: 100 * ms, ITL: 30 * ms}, streamed, time.Second, true},
		{"ttft over", &plan.SLO{TTFT: 79 * ms}, streamed, time.Second, false},
		{"itl over", &plan.SLO{ITL: 29 * ms}, streamed, time.Second, false},
		{"e2e over", &plan.SLO{E2E: 999 * ms}, streamed, time.Second, false},
		{"unstreamed cannot show ttft", &plan.SLO{TTFT: time.Hour}, llmSample{tokens: 3}, ms, false},
		{"unstreamed meets e2e", &plan.SLO{E2E: time.Second}, llmSample{tokens: 3}, ms, true},
	}
	for _, tc := range tests {
		if got := meets(tc.slo, &tc.ls, tc.e2e); got != tc.want {
			t.Errorf("%s: meets = %v, want %v", tc.name, got, tc.want)
		}
	}
}

package engine

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// llmSample is what a generation request adds to its sample.
type llmSample struct {
	streamed  bool
	ttft      time.Duration
	gaps      []time.Duration
	tpot      time.Duration // (e2e − TTFT)/(tokens − 1); 0 when tokens < 2
	tokens    int
	inTokens  int
	fromUsage bool
	good      bool
	sloSet    bool // the point measures goodput
	turn      int  // place in a conversation, from 1; 0 outside one
}

// genLoad is a point's generation settings; nil for other kinds.
type genLoad struct {
	slo         *plan.SLO
	countChunks bool // token_count: chunks
}

// judge turns a generation request's token trace into its sample figures:
// time per output token and whether it met the goodput SLO.
func (g *genLoad) judge(s *sample) *llmSample {
	tr := s.Tokens
	ls := &llmSample{streamed: tr.Streamed, ttft: tr.FirstToken, gaps: tr.Gaps, tokens: tr.OutputTokens,
		inTokens: tr.InputTokens, fromUsage: tr.FromUsage, turn: tr.Turn}
	if g.countChunks {
		ls.tokens, ls.fromUsage = tr.Chunks, false
	}
	e2e := s.Done - s.Sent
	if ls.streamed && ls.tokens > 1 {
		ls.tpot = (e2e - ls.ttft) / time.Duration(ls.tokens-1)
	}
	ls.good = meets(g.slo, ls, s.Done-s.sched)
	ls.sloSet = g.slo != nil
	return ls
}

// meets reports whether a request satisfies every goodput constraint.
// A constraint on TTFT or ITL needs token timing: an unstreamed reply
// cannot show it met them.
func meets(slo *plan.SLO, ls *llmSample, e2e time.Duration) bool {
	if slo == nil {
		return false
	}
	if slo.TTFT > 0 && (!ls.streamed || ls.ttft > slo.TTFT) {
		return false
	}
	if slo.ITL > 0 && (!ls.streamed || ls.tpot > slo.ITL) {
		return false
	}
	return slo.E2E <= 0 || e2e <= slo.E2E
}

// durHist is an exact-sum, HDR-percentile sample of durations.
type durHist struct {
	h     *hdrhistogram.Histogram
	sumUs float64
	max   time.Duration
}

func newDurHist() durHist { return durHist{h: newHist()} }

func (d *durHist) add(v time.Duration) {
	v = max(v, 0)
	d.sumUs += float64(v) / float64(time.Microsecond)
	d.max = max(d.max, v)
	us := min(max(int64(v/time.Microsecond), histLowestUs), histHighestUs)
	_ = d.h.RecordValue(us) // in range by construction
}

func (d *durHist) merge(o *durHist) {
	d.h.Merge(o.h)
	d.sumUs += o.sumUs
	d.max = max(d.max, o.max)
}

func (d *durHist) dist() result.Distribution {
	n := d.h.TotalCount()
	if n == 0 {
		return result.Distribution{}
	}
	hi := float64(d.max) / float64(time.Microsecond)
	q := func(p float64) float64 { return min(float64(d.h.ValueAtPercentile(p)), hi) }
	return result.Distribution{Count: n, AvgUs: d.sumUs / float64(n), P50Us: q(50), P90Us: q(90), P95Us: q(95),
		P99Us: q(99), MaxUs: hi}
}

// llmAcc accumulates the token figures of a window's successful requests.
type llmAcc struct {
	ttft, itl, tpot       durHist
	streamed              int64
	outTokens, inTokens   int64
	fromUsage, fromChunks int64
	good                  int64
	goodputOn             bool
	// turns[k] holds the requests of turn k+1 of multi-turn sessions.
	turns []turnAcc
}

// turnAcc accumulates one turn index of multi-turn sessions.
type turnAcc struct {
	n, inTokens int64
	ttft        durHist
}

// turn is the accumulator of turn k (from 1), grown on demand.
func (l *llmAcc) turn(k int) *turnAcc {
	for len(l.turns) < k {
		l.turns = append(l.turns, turnAcc{ttft: newDurHist()})
	}
	return &l.turns[k-1]
}

func newLLMAcc(goodputOn bool) *llmAcc {
	return &llmAcc{ttft: newDurHist(), itl: newDurHist(), tpot: newDurHist(), goodputOn: goodputOn}
}

func (l *llmAcc) add(s *llmSample) {
	if s.streamed {
		l.streamed++
		l.ttft.add(s.ttft)
		for _, g := range s.gaps {
			l.itl.add(g)
		}
		if s.tokens > 1 {
			l.tpot.add(s.tpot)
		}
	}
	l.outTokens += int64(s.tokens)
	l.inTokens += int64(s.inTokens)
	if s.fromUsage {
		l.fromUsage++
	} else {
		l.fromChunks++
	}
	if s.good {
		l.good++
	}
	l.goodputOn = l.goodputOn || s.sloSet
	if s.turn > 0 {
		t := l.turn(s.turn)
		t.n++
		t.inTokens += int64(s.inTokens)
		if s.streamed {
			t.ttft.add(s.ttft)
		}
	}
}

func (l *llmAcc) merge(o *llmAcc) {
	l.ttft.merge(&o.ttft)
	l.itl.merge(&o.itl)
	l.tpot.merge(&o.tpot)
	l.streamed += o.streamed
	l.outTokens += o.outTokens
	l.inTokens += o.inTokens
	l.fromUsage += o.fromUsage
	l.fromChunks += o.fromChunks
	l.good += o.good
	l.goodputOn = l.goodputOn || o.goodputOn
	for k := range o.turns {
		t := l.turn(k + 1)
		t.n += o.turns[k].n
		t.inTokens += o.turns[k].inTokens
		t.ttft.merge(&o.turns[k].ttft)
	}
}

func (l *llmAcc) metrics(dur time.Duration) *result.LLMMetrics {
	m := &result.LLMMetrics{Streamed: l.streamed, TTFT: l.ttft.dist(), ITL: l.itl.dist(), TPOT: l.tpot.dist(),
		OutputTokens: l.outTokens, InputTokens: l.inTokens, TokensFromUsage: l.fromUsage, TokensFromChunks: l.fromChunks}
	if dur > 0 {
		m.OutputTokensPerSec = float64(l.outTokens) / dur.Seconds()
	}
	for k := range l.turns {
		t := &l.turns[k]
		m.Turns = append(m.Turns, result.TurnMetrics{Turn: k + 1, Requests: t.n, TTFT: t.ttft.dist(), InputTokens: t.inTokens})
	}
	if l.goodputOn {
		g := 0.0
		if dur > 0 {
			g = float64(l.good) / dur.Seconds()
		}
		m.Goodput, m.GoodRequests = &g, l.good
	}
	return m
}

// llmNotes say where a point's token counts came from.
func llmNotes(m *result.LLMMetrics) []string {
	if m == nil {
		return nil
	}
	var out []string
	switch {
	case m.TokensFromChunks > 0 && m.TokensFromUsage == 0:
		out = append(out, "output tokens are counted content chunks (no usage in the replies); a chunk may carry several tokens")
	case m.TokensFromChunks > 0:
		out = append(out, fmt.Sprintf("output tokens: %d replies counted from usage, %d from content chunks", m.TokensFromUsage, m.TokensFromChunks))
	}
	if m.Streamed == 0 && m.TokensFromUsage+m.TokensFromChunks > 0 {
		out = append(out, "replies were not streamed: no TTFT or inter-token figures")
	}
	return out
}

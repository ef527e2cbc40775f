package scenario

import (
	"slices"
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// A trace model's point is the trace: one pass, open loop, at the trace's
// times divided by its speedup, its rate the trace's mean.
func TestTracePlan(t *testing.T) {
	p, err := LoadPlan("testdata/valid/llm-trace.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, pt := range p.Points {
		ids = append(ids, pt.ID)
	}
	if want := []string{"llm/trace", "fast/trace=x2"}; !slices.Equal(ids, want) {
		t.Fatalf("points %v, want %v", ids, want)
	}
	for i, want := range []struct {
		rate float64
		gaps []time.Duration
	}{
		{2 / 0.3, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 0}},
		{2 / 0.15, []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 0}},
	} {
		ld := p.Points[i].Load
		if ld.Mode != plan.LoadRequestRate || ld.Distribution != plan.TraceSchedule || ld.Iterations != 3 ||
			!slices.Equal(ld.Intervals, want.gaps) || ld.Rate < want.rate*0.999 || ld.Rate > want.rate*1.001 {
			t.Errorf("%s: load %+v", p.Points[i].ID, ld)
		}
	}
	m, _ := p.Model("fast")
	if tr := m.Trace; tr == nil || tr.BlockSize != 16 || tr.Speedup != 2 || tr.LengthScale != 0.5 || tr.Requests != 3 || !tr.IgnoreEOS || tr.Where == "" {
		t.Errorf("trace %+v", tr)
	}
}

func TestConversationsAndSharedPrefixPlan(t *testing.T) {
	p, err := LoadPlan("testdata/valid/llm-multiturn.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Points) != 4 || p.Points[0].ID != "llm/c=2" {
		t.Fatalf("points %+v", p.Points)
	}
	m, _ := p.Model("llm")
	want := plan.Conversations{Count: 8, Turns: 4, SystemTokens: 32, UserMean: 16, UserStdDev: 2, OutputMean: 8,
		ThinkTime: 50 * time.Millisecond, Seed: 1, IgnoreEOS: true}
	if c := m.Conversations; c == nil || *c != want {
		t.Errorf("conversations %+v, want %+v", c, want)
	}
	s, _ := p.Model("shared")
	if sp := s.Prompts.SharedPrefix; sp == nil || *sp != (plan.SharedPrefix{Count: 2, Tokens: 64}) {
		t.Errorf("shared prefix %+v", sp)
	}
}

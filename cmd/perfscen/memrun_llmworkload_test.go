package main

import (
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/runner/result"
)

// The shipped trace replay and multi-turn scenarios on the fake clock,
// their prefix-cache thresholds judged (the baseline was recorded on real
// time): with the embedded engine's prefix cache they pass; with
// llm.prefix_cache=off the hit rate the engine reports falls to 0 and the
// check fails, exit 1. The trace's 240 requests each leave at their
// timestamp, and the multi-turn point keeps TTFT by turn.
func TestLLMWorkloadsOnTheFakeClock(t *testing.T) {
	cases := []struct {
		scenario, result, check string
	}{
		{"@scenarios/llm-trace-replay.yaml", "llm-trace-replay.json", "prefix_cache_hit_rate >= 0.5"},
		{"@scenarios/llm-multiturn.yaml", "llm-multiturn.json", "prefix_cache_hit_rate >= 0.6"},
	}
	for _, tc := range cases {
		for _, off := range []bool{false, true} {
			name := tc.result + "/cache on"
			var flags []string
			want := 0
			if off {
				name, want = tc.result+"/cache off", 1
				flags = []string{"--model-param", "llm.prefix_cache=off"}
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var out []string
					if off {
						out = []string{"failed: " + tc.check}
					}
					dir := runMemCase(t, tc.scenario, append(flags, "--no-baseline"), want, out...)
					run := readResult(t, filepath.Join(dir, tc.result))
					if len(run.Points) != 1 {
						t.Fatalf("%d points", len(run.Points))
					}
					p := run.Points[0]
					f := p.FigureMetrics()
					if f.LLM == nil || f.LLM.Engine == nil || f.LLM.Engine.PrefixCache == nil || len(p.EngineSeries) == 0 {
						t.Fatalf("no engine figures: %+v", f.LLM)
					}
					rate, _ := f.LLM.Engine.PrefixCache.HitRate()
					if (rate == 0) != off {
						t.Errorf("prefix-cache hit rate %v with the cache off=%v", rate, off)
					}
					checkWorkload(t, p, f)
				})
			})
		}
	}
}

func checkWorkload(t *testing.T, p result.Point, f result.Metrics) {
	t.Helper()
	switch p.ID {
	case "llm/trace":
		if se := f.ScheduleError; p.Status != result.PointStable || f.Requests != 240 || se == nil || se.Count != 240 || se.MaxUs != 0 {
			t.Errorf("trace point %s: %d requests, schedule error %+v", p.Status, f.Requests, se)
		}
	case "llm/c=4":
		if n := len(f.LLM.Turns); n != 4 {
			t.Fatalf("%d turns, want 4", n)
		}
		for i, tm := range f.LLM.Turns {
			if tm.Turn != i+1 || tm.Requests == 0 || !tm.TTFT.Has() || tm.InputTokens == 0 {
				t.Errorf("turn %+v", tm)
			}
		}
		// The history grows turn by turn.
		if a, b := f.LLM.Turns[0], f.LLM.Turns[3]; b.InputTokens/b.Requests <= a.InputTokens/a.Requests {
			t.Errorf("turn 4 sent %d tokens a request, turn 1 %d", b.InputTokens/b.Requests, a.InputTokens/a.Requests)
		}
	default:
		t.Errorf("point %s", p.ID)
	}
}

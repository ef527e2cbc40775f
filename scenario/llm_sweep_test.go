package scenario

import (
	"slices"
	"strings"
	"testing"
)

// Token lengths expand inside the other dimensions and outside the load
// level; the sweep's values replace the models' means at each point and
// leave their spread, count and seed; compared models share a group at
// each length.
func TestTokenLengthSweepExpansion(t *testing.T) {
	p, err := LoadPlan("testdata/valid/llm-sweep.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, pt := range p.Points {
		ids = append(ids, pt.ID)
	}
	want := []string{
		"llm/c=4,in=128,out=32", "fp8/c=4,in=128,out=32", "llm/c=16,in=128,out=32", "fp8/c=16,in=128,out=32",
		"llm/c=4,in=128,out=64", "fp8/c=4,in=128,out=64", "llm/c=16,in=128,out=64", "fp8/c=16,in=128,out=64",
		"llm/c=4,in=512,out=32", "fp8/c=4,in=512,out=32", "llm/c=16,in=512,out=32", "fp8/c=16,in=512,out=32",
		"llm/c=4,in=512,out=64", "fp8/c=4,in=512,out=64", "llm/c=16,in=512,out=64", "fp8/c=16,in=512,out=64",
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("points\n%v\nwant\n%v", ids, want)
	}
	groups := map[int]int{}
	for i := range p.Points {
		pt := &p.Points[i]
		groups[pt.Group]++
		m, ok := p.Model(pt.Model)
		if !ok {
			t.Fatalf("%s: no model", pt.ID)
		}
		pr := m.PromptsAt(pt)
		if pr == nil || pr.InputMean != float64(pt.InputTokens) || pr.OutputMean != float64(pt.OutputTokens) || !pr.IgnoreEOS {
			t.Errorf("%s: prompts %+v", pt.ID, pr)
		}
		if pt.Coords[CoordInputTokens] == "" || pt.Coords[CoordOutputTokens] == "" {
			t.Errorf("%s: coords %v", pt.ID, pt.Coords)
		}
		switch pt.Model {
		case "llm":
			if pr.InputStdDev != 8 || pr.OutputStdDev != 2 || pr.Count != 20 || pr.Seed != 3 {
				t.Errorf("%s: the model's spread, count and seed were not kept: %+v", pt.ID, pr)
			}
		case "fp8":
			if pr.InputStdDev != 0 || pr.Count != DefaultPromptCount || pr.Seed != 1 {
				t.Errorf("%s: a model without prompts gets the defaults: %+v", pt.ID, pr)
			}
		}
	}
	if len(groups) != 8 || groups[0] != 0 {
		t.Errorf("groups %v: want 8 pairs", groups)
	}
	// The threshold's selector picks the points at in=512, out=64 only.
	th := p.Checks.Thresholds[0]
	if got := th.Selector.At[CoordInputTokens]; !slices.Equal(got, []string{"512"}) || !slices.Equal(th.Selector.At[CoordOutputTokens], []string{"64"}) {
		t.Errorf("threshold at %v", th.Selector.At)
	}
}

// include_usage: false with token_count: usage on a stream is refused at
// load: every request would fail for want of usage.
func TestIncludeUsageNeededForUsageCounts(t *testing.T) {
	src := "version: 1\nserver: {kind: openai, url: \"http://localhost:8000\"}\nmodels: [{name: llm, prompts: {input_tokens: {mean: 8}, output_tokens: {mean: 8}}}]\nllm:\n  include_usage: false\n  token_count: usage\n"
	_, err := Parse("u.yaml", []byte(src), nil)
	if err == nil || !strings.Contains(err.Error(), "u.yaml:5:18: llm.include_usage: must be true") {
		t.Errorf("got %v", err)
	}
}

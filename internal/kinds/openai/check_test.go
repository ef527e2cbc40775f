package openai

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/runner/plan"
)

// Check reads each input-data file as Open will and places each problem
// where the scenario names the file.
func TestCheckPayloadFiles(t *testing.T) {
	p := &plan.Plan{LLM: &plan.LLM{Endpoint: EndpointChat, Stream: true}, Models: []plan.Model{
		{Alias: "a", Name: "llm", Input: plan.Input{Kind: "json", Paths: []string{"testdata/openai-syntax.json"},
			Where: []string{"s.yaml:7:17: models[0].input_data"}}},
		{Alias: "b", Name: "llm", Input: plan.Input{Kind: "json", Paths: []string{"testdata/openai-nomessages.json"}}},
		{Alias: "c", Name: "llm", Input: plan.Input{Kind: "json", Paths: []string{"../../../scenarios/data/openai-chat.json"}}},
	}}
	err := Kind{}.Check(p)
	if exitcode.Of(err) != exitcode.Invalid {
		t.Fatalf("err = %v (exit %d), want exit 2", err, exitcode.Of(err))
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "s.yaml:7:17: models[0].input_data: testdata/openai-syntax.json:3: invalid character") ||
		!strings.HasPrefix(lines[1], "model b input data: testdata/openai-nomessages.json:3: data[1].payload[0]") {
		t.Fatalf("errors:\n%s", err)
	}
	if err := (Kind{}).Check(&plan.Plan{Models: p.Models[2:], LLM: p.LLM}); err != nil {
		t.Fatalf("a good file: %v", err)
	}
}

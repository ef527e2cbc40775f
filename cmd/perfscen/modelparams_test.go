package main

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// With several servers --model-param names its server, so a candidate can
// be slowed without touching the released build; a flag without a server
// or with an unknown one is refused listing the servers.
func TestApplyModelParamsToNamedServers(t *testing.T) {
	newPlan := func() *plan.Plan {
		return &plan.Plan{Scenario: "ab", Servers: []plan.Server{
			{Name: "candidate", Embedded: true},
			{Name: "released", Embedded: true, EmbeddedModels: map[string]map[string]string{"delay": {"delay": "10ms"}}},
			{Name: "remote", URL: "triton:8001"},
		}, Models: []plan.Model{{Alias: "candidate/delay", Server: "candidate", Name: "delay"},
			{Alias: "released/delay", Server: "released", Name: "delay"}, {Alias: "remote/delay", Server: "remote", Name: "delay"}}}
	}
	pl := newPlan()
	if _, err := applyModelParams(pl, []string{"candidate/delay.delay=14ms"}); err != nil {
		t.Fatal(err)
	}
	if got := pl.Servers[0].EmbeddedModels["delay"]["delay"]; got != "14ms" {
		t.Errorf("candidate delay = %q, want 14ms", got)
	}
	if got := pl.Servers[1].EmbeddedModels["delay"]["delay"]; got != "10ms" {
		t.Errorf("released delay = %q, want it untouched at 10ms", got)
	}
	for _, tc := range []struct{ flag, want string }{
		{"delay.delay=14ms", "name the server: server/model.key=value (servers: candidate, released, remote)"},
		{"nightly/delay.delay=14ms", `unknown server "nightly" (servers: candidate, released, remote)`},
		{"remote/delay.delay=14ms", "needs an embedded server"},
	} {
		_, err := applyModelParams(newPlan(), []string{tc.flag})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.flag, err, tc.want)
		}
	}
}

// baseline show names every server a testbed was recorded against.
func TestServersTextOfTestbed(t *testing.T) {
	for _, tc := range []struct {
		env  result.Environment
		want string
	}{
		{result.Environment{Server: result.ServerInfo{Name: "triton", Version: "2.50"}}, "server triton 2.50"},
		{result.Environment{}, "server n/a"},
		{result.Environment{Servers: []result.ServerInfo{{Key: "candidate", Name: "triton", Version: "2.51"}, {Key: "released"}}},
			"servers candidate=triton 2.51, released=n/a"},
	} {
		if got := serversText(tc.env); got != tc.want {
			t.Errorf("serversText = %q, want %q", got, tc.want)
		}
	}
}

// One set of flags serves a run over several scenarios: a scenario that
// does not measure the model is left as it is, with a note, not refused
// (make gate GATE_FLAGS="--model-param mlp_optimized.slowdown=4" made the
// server A/B scenarios invalid).
func TestModelParamsForAModelTheScenarioLacks(t *testing.T) {
	pl := &plan.Plan{Scenario: "server-ab", Servers: []plan.Server{{Name: "released", Embedded: true}, {Name: "candidate", Embedded: true}},
		Models: []plan.Model{{Alias: "released/delay", Server: "released", Name: "delay"}, {Alias: "candidate/delay", Server: "candidate", Name: "delay"}}}
	notes, err := applyModelParams(pl, []string{"mlp_optimized.slowdown=4"})
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "scenario server-ab measures no model mlp_optimized; not applied") {
		t.Fatalf("notes %q, err %v", notes, err)
	}
	for _, s := range pl.Servers {
		if len(s.EmbeddedModels) != 0 {
			t.Errorf("server %s changed: %v", s.Name, s.EmbeddedModels)
		}
	}
}

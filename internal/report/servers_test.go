package report

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/result"
)

// In a run over several servers every renderer labels each arm with its
// server: the server/alias names, and where a renderer describes the run,
// the servers themselves.
func TestServersLabelled(t *testing.T) {
	run := &result.Run{Scenario: "ab", Source: "perfscen", Status: result.StatusComplete,
		Environment: result.Environment{Servers: []result.ServerInfo{
			{Key: "candidate", Name: "triton", Version: "2.51.0", URL: "localhost:9000"},
			{Key: "released", Embedded: true},
		}}}
	for _, arm := range []struct{ server, model string }{{"released", "released/delay"}, {"candidate", "candidate/delay"}} {
		run.Points = append(run.Points, result.Point{ID: arm.model + "/c=1", Model: arm.model, ModelName: "delay", Server: arm.server,
			Protocol: "http", BatchSize: 1, Mode: "concurrency", Concurrency: 1, Status: result.PointStable,
			Coords: map[string]string{"concurrency": "1"}})
	}
	v := &verdict.Verdict{Checks: []verdict.Check{{Kind: verdict.KindComparison, Name: "candidate/delay-vs-released/delay-p50 <= 1.15",
		Model: "candidate/delay", Point: "candidate/delay/c=1", RefPoint: "released/delay/c=1", Metric: "p50", Status: verdict.StatusFail}}}
	cases := []struct {
		format string
		want   []string
	}{
		{"console", []string{"Server candidate: triton 2.51.0 at localhost:9000", "Server released: embedded reference server",
			"Model: candidate/delay (delay on server candidate)", "Model: released/delay (delay on server released)",
			"candidate/delay/c=1 vs released/delay/c=1"}},
		{"markdown", []string{"server **candidate**: triton 2.51.0 at localhost:9000", "server **released**: embedded reference server", "candidate/delay/c=1 vs released/delay/c=1"}},
		{"html", []string{"server candidate: triton 2.51.0 at localhost:9000", "server released: embedded reference server", "candidate/delay/c=1"}},
		{"junit", []string{"@ candidate/delay/c=1 vs released/delay/c=1"}},
	}
	for _, tc := range cases {
		t.Run(tc.format, func(t *testing.T) {
			got := string(render(t, tc.format, run, v, Options{}))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s lacks %q:\n%s", tc.format, w, got)
				}
			}
		})
	}
}

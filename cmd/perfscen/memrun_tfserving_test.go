package main

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
)

// The TF Serving quickstart on the fake clock, against its recorded
// baseline (the testbed it was recorded on is named, so the history
// applies on any machine): as shipped it passes; with the model 50%
// slower it exits 1 naming the regression on both protocols. Every
// point's server figures are TF Serving's own, read from the embedded
// server's Prometheus endpoint.
func TestTFServingQuickstartOnTheFakeClock(t *testing.T) {
	const testbed = "hw-e020c5f2e2b8"
	cases := []struct {
		name  string
		flags []string
		want  int
		out   []string
	}{
		{name: "as shipped", want: 0, out: []string{"PASS"}},
		{name: "model slower", flags: []string{"--model-param", "simple.added_latency=15ms"}, want: 1,
			out: []string{"FAIL: ", "p50 vs baseline @ simple/c=1,proto=grpc", "p50 vs baseline @ simple/c=1,proto=http"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				flags := append([]string{"--testbed", testbed}, tc.flags...)
				dir := runMemCase(t, "@scenarios/tfserving-quickstart.yaml", flags, tc.want, tc.out...)
				run := readResult(t, filepath.Join(dir, "tfserving-quickstart.json"))
				if len(run.Points) != 4 {
					t.Fatalf("%d points, want 4", len(run.Points))
				}
				for _, p := range run.Points {
					s := p.Summary.Server
					if s == nil || s.RequestCount == 0 || s.AvgRequestUs < 10000 {
						t.Errorf("%s: server figures %+v, want TF Serving's request count and latency", p.ID, s)
					}
				}
				if n := strings.Join(run.Notes, "\n"); !strings.Contains(n, "server figures are TF Serving's own") {
					t.Errorf("notes do not label the server figures: %s", n)
				}
			})
		})
	}
}

// The same model under TF Serving and under Triton, interleaved, on the
// fake clock: equal servers pass; a TF Serving 40% slower fails both
// comparisons, naming both arms.
func TestTFServingVsTritonOnTheFakeClock(t *testing.T) {
	cases := []struct {
		name  string
		flags []string
		want  int
		out   []string
	}{
		{name: "equal", want: 0, out: []string{"PASS"}},
		{name: "tfserving slower", flags: []string{"--model-param", "tfserving/delay.delay=14ms"}, want: 1,
			out: []string{"failed: tfserving-latency <= 1.15 @ tfserving/delay/c=2 vs triton/delay/c=2",
				"tfserving-throughput >= 0.85 @ tfserving/delay/c=2 vs triton/delay/c=2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := runMemCase(t, "@scenarios/tfserving-vs-triton.yaml", tc.flags, tc.want, tc.out...)
				run := readResult(t, filepath.Join(dir, "tfserving-vs-triton.json"))
				names := map[string]string{}
				for _, s := range run.Environment.Servers {
					names[s.Key] = s.Name
				}
				if names["tfserving"] != "tensorflow-serving" || names["triton"] != "triton" {
					t.Errorf("servers %v", names)
				}
				for _, p := range run.Points {
					if len(p.Trials) != 10 {
						t.Errorf("%s: %d trials, want the 10 asked for", p.ID, len(p.Trials))
					}
				}
			})
		})
	}
}

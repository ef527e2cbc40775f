package main

import (
	"path/filepath"
	"testing"
	"testing/synctest"
)

// The TorchServe quickstart on the fake clock: its JSON, multipart and raw
// bodies are answered and validated, and the server's queue time comes
// from the flavour's metrics API.
func TestTorchServeQuickstartOnTheFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := runMemCase(t, "@scenarios/torchserve-quickstart.yaml", nil, 0, "PASS")
		run := readResult(t, filepath.Join(dir, "torchserve-quickstart.json"))
		if s := run.Environment.Server; s.Name != "torchserve" || !s.Embedded {
			t.Errorf("server %+v", s)
		}
		for _, p := range run.Points {
			f := p.FigureMetrics()
			if f.Errors != 0 || p.Validation.Checked == 0 || p.Validation.Mismatches != 0 {
				t.Errorf("%s: errors %d, validation %+v", p.ID, f.Errors, p.Validation)
			}
			if f.Server == nil || f.Server.RequestCount == 0 || f.Server.AvgRequestUs < 10000 {
				t.Errorf("%s: server figures %+v", p.ID, f.Server)
			}
		}
	})
}

// Two TorchServe builds and the same model under Triton, interleaved: equal
// builds pass, and a candidate 40% slower fails naming both arms.
func TestTorchServeABOnTheFakeClock(t *testing.T) {
	cases := []struct {
		name  string
		flags []string
		want  int
		out   string
	}{
		{name: "candidate equal", want: 0, out: "PASS"},
		{name: "candidate slower", flags: []string{"--model-param", "candidate/simple.added_latency=14ms"}, want: 1,
			out: "failed: candidate/simple-vs-released/simple-p50 <= 1.15 @ candidate/simple/c=1 vs released/simple/c=1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				runMemCase(t, "@test/e2e/testdata/torchserve-ab/ab.yaml", tc.flags, tc.want, tc.out)
			})
		})
	}
}

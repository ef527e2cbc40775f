package main

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
)

// The mix example on the fake clock: interactive beside batch on one
// device waits behind batch's executions (p50 twice its p50 alone), which
// the example's two comparisons find visible and bounded; a batch model
// three times slower makes the interference unbounded and the run fails
// naming the check and both arms.
func TestMixExampleOnTheFakeClock(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		flags []string
		want  int
		out   []string
	}{
		{name: "as shipped", want: 0, out: []string{"PASS", "busy/all", "pass   │ comparison │ interference-bounded <= 3"}},
		{name: "slower neighbour", flags: []string{"--model-param", "delay.delay=30ms"}, want: 1,
			out: []string{"failed: interference-bounded <= 3 @ busy/interactive/c=1 vs alone/interactive/c=1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := runMemCase(t, "@scenarios/mix-interference.yaml", tc.flags, tc.want, tc.out...)
				run := readResult(t, filepath.Join(dir, "mix-interference.json"))
				var ids []string
				for _, p := range run.Points {
					ids = append(ids, p.ID)
				}
				if got := strings.Join(ids, " "); got != "alone/interactive/c=1 busy/interactive/c=1 busy/batch/c=2 busy/all" {
					t.Errorf("points %s", got)
				}
			})
		})
	}
}

const mixSweepScenario = `
version: 1
name: mix-sweep
server:
  embedded: true
  embedded_models:
    simple: {added_latency: 10ms, device: gpu0}
    delay: {delay: 10ms, device: gpu0}
models:
  - {name: simple, alias: interactive}
  - {name: delay, alias: batch, shapes: {INPUT0: [16]}}
sweep:
  concurrency: [1, 3]
mixes:
  - {name: alone, models: {interactive: {concurrency: 1}}}
  - {name: busy, models: {batch: {concurrency: sweep}, interactive: {concurrency: 1}}}
measurement: {window: 500ms, trials: 5, max_trials: 6, stability: 20%}
thresholds:
  - {check: throughput >= 50/s, models: [busy]}
baseline:
  path: mix-baseline.json
  metrics: [throughput, p50]
  tolerances: {throughput: -20%, p50: +20%}
`

// A sweep over one model's load while the other holds its own: batch at
// 1 then 3 beside interactive at 1, each step beside interactive alone. The baseline gates every member and the whole mix at each step:
// recorded once, the same build passes, and a slower batch model fails
// the whole mix's throughput and interactive's latency beside it.
func TestMixSweepWithBaseline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		sc := writeScenario(t, dir, "mix-sweep.yaml", mixSweepScenario)
		first := filepath.Join(dir, "first.json")
		if code, stdout, stderr := runMem(t, "run", "-q", "--out", first, "--no-baseline", sc); code != 0 {
			t.Fatalf("first run: exit %d\n%s\n%s", code, stdout, stderr)
		}
		run := readResult(t, first)
		var ids []string
		for _, p := range run.Points {
			ids = append(ids, p.ID)
		}
		want := "alone/interactive/c=1@c=1 busy/interactive/c=1@c=1 busy/batch/c=1@c=1 busy/all@c=1 " +
			"alone/interactive/c=1@c=3 busy/interactive/c=1@c=3 busy/batch/c=3@c=3 busy/all@c=3"
		if got := strings.Join(ids, " "); got != want {
			t.Fatalf("points\n%s\nwant\n%s", got, want)
		}
		if code, stdout, stderr := runMem(t, "baseline", "update", "--from", first); code != 0 {
			t.Fatalf("baseline update: exit %d\n%s\n%s", code, stdout, stderr)
		}
		code, stdout, stderr := runMem(t, "run", "-q", "--out-dir", dir, sc)
		if code != 0 || !strings.Contains(stdout, "busy/all@c=3") {
			t.Fatalf("same build: exit %d\n%s\n%s", code, stdout, stderr)
		}
		code, stdout, _ = runMem(t, "run", "-q", "--out-dir", dir, "--model-param", "delay.delay=30ms", sc)
		if code != 1 {
			t.Fatalf("slower batch: exit %d, want 1\n%s", code, stdout)
		}
		for _, s := range []string{"busy/all@c=3", "busy/interactive/c=1@c=3"} {
			if !strings.Contains(stdout, "fail") || !strings.Contains(stdout, s) {
				t.Errorf("slower batch: %s not failed:\n%s", s, stdout)
			}
		}
	})
}

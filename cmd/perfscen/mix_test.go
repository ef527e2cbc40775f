package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/runner/result"
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

const mixTwoServersScenario = `
version: 1
name: mix-two-servers
servers:
  left:
    embedded: true
    embedded_models: {simple: {added_latency: 10ms}}
  right:
    embedded: true
    embedded_models: {delay: {delay: 20ms}}
models:
  - {name: left/simple, alias: fast}
  - {name: right/delay, alias: slow, shapes: {INPUT0: [16]}}
mixes:
  - {name: both, models: {left/fast: {concurrency: 2}, right/slow: {concurrency: 1}}}
measurement: {window: 500ms, trials: 3, max_trials: 3, stability: 50%}
thresholds:
  - errors == 0
  - {check: throughput >= 140/s, models: [both]}
  - {check: p99 < 30ms, models: [both/left/fast]}
`

// A mix across two servers, one model on each, run as one unit: each
// member's figures come from its own server (its server figures count
// its own requests, none of the other's), the members' windows cover the
// same seconds, and the whole mix sums their requests and throughput.
func TestMixAcrossTwoServers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		sc := writeScenario(t, dir, "mix-two-servers.yaml", mixTwoServersScenario)
		out := filepath.Join(dir, "out.json")
		code, stdout, stderr := runMem(t, "run", "-q", "--out", out, sc)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		run := readResult(t, out)
		byID := map[string]int{}
		var ids []string
		for i, p := range run.Points {
			byID[p.ID] = i
			ids = append(ids, p.ID)
		}
		if got := strings.Join(ids, " "); got != "both/left/fast/c=2 both/right/slow/c=1 both/all" {
			t.Fatalf("points %s", got)
		}
		fast, slow, all := run.Points[byID["both/left/fast/c=2"]], run.Points[byID["both/right/slow/c=1"]], run.Points[byID["both/all"]]
		if fast.Server != "left" || slow.Server != "right" || fast.Mix != "both" || slow.Mix != "both" || all.Mix != "both" {
			t.Errorf("servers %q %q, mixes %q %q %q", fast.Server, slow.Server, fast.Mix, slow.Mix, all.Mix)
		}
		if len(fast.Trials) != 3 || len(slow.Trials) != 3 || len(all.Trials) != 3 {
			t.Fatalf("trials %d %d %d", len(fast.Trials), len(slow.Trials), len(all.Trials))
		}
		for i := range 3 {
			f, s, a := fast.Trials[i], slow.Trials[i], all.Trials[i]
			if !f.Start.Equal(s.Start) || f.Duration != s.Duration || !a.Start.Equal(f.Start) {
				t.Errorf("trial %d: windows %v+%v, %v+%v, whole mix %v", i, f.Start, f.Duration, s.Start, s.Duration, a.Start)
			}
			if a.Metrics.Requests != f.Metrics.Requests+s.Metrics.Requests || a.Metrics.Requests == 0 {
				t.Errorf("trial %d: whole mix %d requests, members %d + %d", i, a.Metrics.Requests, f.Metrics.Requests, s.Metrics.Requests)
			}
			// Each server counted its own member's requests only (give or
			// take the requests in flight at a window's edge, which the
			// server counts when they end and the client when they began).
			for _, m := range []struct {
				name string
				tr   result.Trial
				c    int64
			}{{"fast", f, 2}, {"slow", s, 1}} {
				if sv := m.tr.Metrics.Server; sv == nil || sv.RequestCount < m.tr.Metrics.Requests-m.c || sv.RequestCount > m.tr.Metrics.Requests+m.c {
					t.Errorf("trial %d: %s's server figures %+v for %d requests", i, m.name, sv, m.tr.Metrics.Requests)
				}
			}
			if f.Metrics.Server != nil && s.Metrics.Server != nil &&
				(a.Metrics.Server == nil || a.Metrics.Server.RequestCount != f.Metrics.Server.RequestCount+s.Metrics.Server.RequestCount) {
				t.Errorf("trial %d: whole mix's server figures %+v, members' %d + %d", i, a.Metrics.Server, f.Metrics.Server.RequestCount, s.Metrics.Server.RequestCount)
			}
		}
		// simple runs one request at a time for 10 ms (two outstanding
		// wait 20 ms each), delay 20 ms: 100/s and 50/s on the fake clock,
		// each at its own server's pace, 150/s together.
		fs, ss, as := fast.Summary, slow.Summary, all.Summary
		if as.Requests != fs.Requests+ss.Requests || fs.Throughput < 90 || fs.Throughput > 110 || ss.Throughput < 45 || ss.Throughput > 55 ||
			math.Abs(as.Throughput-(fs.Throughput+ss.Throughput)) > 1e-6*as.Throughput {
			t.Errorf("summaries: fast %d %.1f/s, slow %d %.1f/s, whole mix %d %.1f/s", fs.Requests, fs.Throughput, ss.Requests, ss.Throughput, as.Requests, as.Throughput)
		}
		if !strings.Contains(stdout, "pass   │ threshold │ throughput >= 140/s │ both/all") || !strings.Contains(stdout, "PASS") {
			t.Errorf("report:\n%s", stdout)
		}
	})
}

const mixConflicting = `version: 1
server: {embedded: true}
models:
  - {name: simple, alias: interactive}
  - {name: delay, alias: batch, shapes: {INPUT0: [16]}}
mixes:
  - name: busy
    models:
      interactive: {concurrency: 1}
      batch: {concurrency: 2, request_rate: 50}
`

// An invalid mix stops every command that loads it with exit 2 before
// any load, naming the file, line and field: run, validate, plan, an
// agent, and the coordinator of a distributed run.
func TestInvalidMixExits2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sc := writeScenario(t, dir, "conflict.yaml", mixConflicting)
	want := "conflict.yaml:10:14: mixes[0].models.batch: the loads conflict: concurrency and request_rate are given; give one"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"run", []string{"run", "-q", sc}, want},
		{"validate", []string{"validate", sc}, want},
		{"plan", []string{"plan", sc}, want},
		{"agent", []string{"agent", "--coordinator", "127.0.0.1:7700", sc}, want},
		{"coordinator", []string{"run", "--agents", "2", sc}, want},
		{"the parser's collection", []string{"run", "-q", "@scenario/testdata/invalid/mixes.yaml"},
			"mixes.yaml:21:7: mixes[1].models: the shares add up to 110% of the mix's request_rate; at most 100%"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMem(t, tc.args...)
			if code != 2 || !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("exit %d, want 2 saying %q\nstdout:\n%s\nstderr:\n%s", code, tc.want, stdout, stderr)
			}
		})
	}
}

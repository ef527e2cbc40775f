package main

import (
	"strings"
	"testing"
)

// baseline show lists the usual metrics and an LLM point's headline
// figures by default, the named ones with --metric, every one with --all,
// and refuses a name that is not a metric.
func TestBaselineShowMetrics(t *testing.T) {
	const llm = "../../baselines/llm-quickstart.json"
	row := func(m string) string { return "│ llm/c=8  │ " + m + " " }
	for _, c := range []struct {
		name     string
		args     []string
		code     int
		has, not []string
	}{
		{name: "default", args: []string{llm},
			has: []string{row("throughput"), row("p99"), row("tpot_p50"), row("ttft_p50"), row("output_tokens_per_s"), row("goodput")},
			not: []string{row("itl_max"), row("tpot_p99")}},
		{name: "named", args: []string{llm, "--metric", "tpot_p99", "--metric", "throughput"},
			has: []string{row("tpot_p99"), row("throughput")},
			not: []string{row("p50"), row("tpot_p50")}},
		{name: "all", args: []string{llm, "--all"},
			has: []string{row("itl_max"), row("tpot_p99"), row("latency_avg"), row("throughput")}},
		{name: "unknown metric", args: []string{llm, "--metric", "tpot_p51"}, code: 2,
			has: []string{`--metric "tpot_p51": not a metric`}},
		{name: "all and named", args: []string{llm, "--all", "--metric", "p50"}, code: 2,
			has: []string{"--all and --metric"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"baseline", "show"}, c.args...)...)
			out := stdout + stderr
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, out)
			}
			for _, s := range c.has {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q\n%s", s, out)
				}
			}
			for _, s := range c.not {
				if strings.Contains(out, s) {
					t.Errorf("output has %q\n%s", s, out)
				}
			}
		})
	}
}

// A testbed's CPU identity, where the history recorded one, is printed
// with its environment: it is what tells apart two CPUs of one name.
func TestBaselineShowCPUIdentity(t *testing.T) {
	code, stdout, stderr := runCLI(t, "baseline", "show", "../../baselines/engine-comparison.json")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "  cpu identity: vendor_id=AuthenticAMD cpu family=25 model=17 stepping=1; L1d 32K L1i 32K L2 1024K L3 32768K\n") {
		t.Errorf("no cpu identity line:\n%s", stdout)
	}
	code, stdout, _ = runCLI(t, "baseline", "show", "../../baselines/quickstart.json")
	if code != 0 || strings.Contains(stdout, "cpu identity") {
		t.Errorf("a history without an identity printed one (exit %d):\n%s", code, stdout)
	}
}

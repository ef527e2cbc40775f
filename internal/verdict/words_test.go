package verdict

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/perfscen/perfscen/internal/stats"
	"github.com/perfscen/perfscen/runner/plan"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// holmSteps restates stats.Holm: a hypothesis is rejected exactly when
// Holm reached it and its p met the level it names.
func TestHolmStepsAgreeWithHolm(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 500; trial++ {
		m := 1 + rng.IntN(6)
		p, a := make([]float64, m), make([]float64, m)
		for i := range p {
			p[i] = rng.Float64() * 0.05
			a[i] = []float64{0.01, 0.009, 0.0005}[rng.IntN(3)]
		}
		rej, steps := stats.Holm(p, a), holmSteps(p, a)
		for i := range p {
			if got := !steps[i].blocked && p[i] <= steps[i].level; got != rej[i] {
				t.Fatalf("p=%v α=%v: step %d %+v says rejected=%v, Holm says %v", p, a, i, steps[i], got, rej[i])
			}
		}
	}
}

// Every undecided comparison says which part of the decision held it back.
func TestInconclusiveReasons(t *testing.T) {
	side := func(p, level float64, blocked, ci bool) testSide {
		return testSide{p: p, holm: holmStep{level: level, blocked: blocked}, rejected: !blocked && p <= level, ci: ci}
	}
	for _, tc := range []struct {
		name       string
		op         string
		value      float64
		lo, hi     float64
		pass, fail testSide
		m          int
		want       string
		wantP      float64
	}{
		{"interval below a min bound, test short of its level", ">=", 0.62, 0.443, 0.887,
			side(0.97, 0.00125, false, false), side(0.02, 0.00125, false, true), 4,
			"ratio 0.620; 95% interval [0.443, 0.887] lies wholly below the bound 0.9, but the rank test's p = 0.02 > α = 0.0013 after Holm over 4 checks, so a ratio below the bound is not shown", 0.02},
		{"interval above a min bound, test short", ">=", 0.99, 0.926, 1.059,
			side(0.012, 0.009, false, true), side(0.99, 0.009, false, false), 1,
			"ratio 0.990; 95% interval [0.926, 1.059] lies wholly above the bound 0.9, but the rank test's p = 0.012 > α = 0.009, so a ratio above the bound is not shown", 0.012},
		{"interval straddles", "<=", 1.14, 1.08, 1.21,
			side(0.3, 0.01, false, false), side(0.7, 0.01, false, false), 2,
			"ratio 1.140; the 95% interval [1.080, 1.210] contains the bound 1.15, and the rank test's p = 0.3 > α = 0.01 after Holm over 2 checks", 0.3},
		{"test rejects, interval straddles", ">=", 1.2, 1.14, 1.3,
			side(0.001, 0.005, false, false), side(0.999, 0.005, false, false), 2,
			"the rank test puts the ratio above the bound 1.15 (p = 0.001 ≤ α = 0.005 after Holm over 2 checks), but the 95% interval [1.140, 1.300] contains the bound", 0.001},
		{"Holm stopped before it", ">=", 1.3, 1.2, 1.4,
			side(0.004, 0.005, true, true), side(0.999, 0.005, false, false), 2,
			"the rank test's p = 0.004 is within its level α = 0.005 after Holm over 2 checks, but Holm's procedure stopped earlier", 0.004},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bound := 0.9
			if tc.op == "<=" || tc.value > 1 {
				bound = 1.15
			}
			c := &Check{Op: tc.op, Value: tc.value, Lo: tc.lo, Hi: tc.hi, Bound: bound, Confidence: CIConfidence, N: 10, NRef: 10, MDE: 0.05}
			d := decision{c: c, m: tc.m, pass: tc.pass, fail: tc.fail}
			got := d.inconclusive()
			if !strings.Contains(got, tc.want) {
				t.Errorf("message\n  %s\nlacks\n  %s", got, tc.want)
			}
			if s, _ := d.undecided(); s.p != tc.wantP {
				t.Errorf("p shown %g, want %g", s.p, tc.wantP)
			}
		})
	}
}

// exponent finds a number printed in exponent form.
var exponent = regexp.MustCompile(`\d[eE][+-]?\d`)

// TestMessagesGolden renders the messages of every kind of decision the
// gate makes on seeded data. Every bound in them carries its unit, every
// p is the deciding test's and no number is in exponent form.
// go test ./internal/verdict -run TestMessagesGolden -update rewrites it.
func TestMessagesGolden(t *testing.T) {
	var b strings.Builder
	show := func(title string, cs []Check) {
		fmt.Fprintf(&b, "== %s\n", title)
		for _, c := range cs {
			fmt.Fprintf(&b, "%s %s @ %s: %s\n", c.Status, c.Name, c.Point, c.Message)
			for _, w := range c.Warnings {
				fmt.Fprintf(&b, "    warning: %s\n", w)
			}
		}
	}
	rng := rand.New(rand.NewPCG(21, 22))
	ref := noisy(rng, 10, 1000, 20000, 0.02)
	run := mkRun(
		mkPoint("opt/c=1", "opt", c(1), noisy(rng, 10, 1300, 15000, 0.02)),
		mkPoint("same/c=1", "same", c(1), noisy(rng, 10, 1000, 20000, 0.02)),
		mkPoint("edge/c=1", "edge", c(1), noisy(rng, 10, 1150, 17400, 0.02)),
		mkPoint("ref/c=1", "ref", c(1), ref),
	)
	show("comparisons", Options{}.Comparisons([]plan.Comparison{
		{Name: "faster", Candidate: "opt", Reference: "ref", Metric: "throughput", MinRatio: 1.15},
		{Name: "no-faster", Candidate: "same", Reference: "ref", Metric: "throughput", MinRatio: 1.15},
		{Name: "on-the-edge", Candidate: "edge", Reference: "ref", Metric: "throughput", MinRatio: 1.15},
		{Name: "latency", Candidate: "same", Reference: "ref", Metric: "p95", MaxRatio: 0.9},
	}, run))
	show("thresholds", Thresholds([]plan.Threshold{
		{Metric: "p95", Op: "<", Value: 18000},
		{Metric: "throughput", Op: ">=", Value: 1100},
	}, mkRun(mkPoint("ref/c=1", "ref", c(1), ref))))
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput", "p95"}}
	for _, tc := range []struct {
		name    string
		k       int
		tp, lat float64
		cv      float64
		tol     map[string]float64
	}{
		{"baseline: unchanged", 8, 1, 1, 0.02, nil},
		{"baseline: regressed", 8, 0.85, 1.2, 0.02, nil},
		{"baseline: within the scenario's tolerance", 8, 0.95, 1.04, 0.02, map[string]float64{"throughput": -0.15, "p95": 0.3}},
		{"baseline: noisy run", 8, 0.955, 1.045, 0.12, nil},
		{"baseline: short history", 3, 0.85, 1, 0.02, nil},
	} {
		rng := rand.New(rand.NewPCG(7, 8))
		base := history(t, rng, tc.k, 0.01)
		s := *spec
		s.Tolerances = tc.tol
		p := mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000*tc.tp, 20000*tc.lat, tc.cv))
		var cs []Check
		for _, c := range (Options{}).Baseline(&s, base, mkRun(p)) {
			if c.Point == "a/c=1" {
				cs = append(cs, c)
			}
		}
		show(tc.name, cs)
	}
	got := b.String()
	if m := exponent.FindString(got); m != "" {
		t.Errorf("a number in exponent form (%q) in:\n%s", m, got)
	}
	const path = "testdata/messages.golden"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (go test -update writes it): %v", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s mismatch (-want +got); go test -update if intended:\n%s", path, d)
	}
}

// The interval a message says lies wholly on one side of the bound is one
// that does: the decision holds the 95% interval to the bound, and the
// check shows the wider one at the rank test's level. Seen before:
// "99.9% interval [0.216, 1.650] lies wholly below the bound 1".
func TestIntervalNamedIsTheOneThatLies(t *testing.T) {
	side := func(p, level float64, blocked, ci bool) testSide {
		return testSide{p: p, holm: holmStep{level: level, blocked: blocked}, rejected: p <= level && !blocked, ci: ci}
	}
	c := &Check{Op: ">=", Value: 0.6, Lo: 0.216, Hi: 1.650, Bound: 1, Confidence: 0.999, N: 10, NRef: 10, MDE: 0.3}
	d := decision{c: c, m: 1, lo95: 0.41, hi95: 0.93,
		pass: side(0.99, 0.0005, false, false), fail: side(0.02, 0.0005, false, true)}
	got := d.inconclusive()
	if want := "95% interval [0.410, 0.930] lies wholly below the bound 1"; !strings.Contains(got, want) || strings.Contains(got, "[0.216, 1.650] lies wholly") {
		t.Errorf("message\n  %s\nwant\n  %s", got, want)
	}
	// Where the shown interval lies beyond too, it is the one named.
	c.Lo, c.Hi = 0.30, 0.97
	if got := d.inconclusive(); !strings.Contains(got, "99.9% interval [0.300, 0.970] lies wholly below the bound 1") {
		t.Errorf("message\n  %s", got)
	}
	c.Value, c.Lo, c.Hi = 1.5, 0.9, 2.3
	d.lo95, d.hi95 = 1.1, 2.0
	d.fail.ci = false
	if got := d.passed(); !strings.Contains(got, "95% interval [1.100, 2.000] lies wholly above the bound 1") {
		t.Errorf("passed: %s", got)
	}
}

// What a disturbance could account for is written with one decimal, as
// the change beside it ("+39.1% vs history"), not "9.857%".
func TestDisturbanceSizeOneDecimal(t *testing.T) {
	c := &Check{Unit: "infer/s"}
	for _, tt := range []struct {
		rel  float64
		want string
	}{{0.09857, "9.9%"}, {0.5, "50.0%"}, {1.1111, "111.1%"}} {
		if got := (explanation{rel: tt.rel, why: "x"}).size(c); got != tt.want {
			t.Errorf("size of %g: %q, want %q", tt.rel, got, tt.want)
		}
	}
}

package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/perfscen/perfscen/runner/plan"
)

// Mixes expand into steps: at each step every mix's members, each with its
// own load, joined by one Together id; mixes joined by a comparison share
// an interleaving group at each step; a member that follows the sweep
// takes the step's value while the others hold theirs.
func TestExpandMixes(t *testing.T) {
	type row struct {
		ID            string
		Model         string
		Mix           string
		Together      int
		Group         int
		Mode          plan.LoadMode
		Concurrency   int
		Rate          float64
		Coord         string // the load coordinate, "" when absent
		CoordRequests string
	}
	const head = `
version: 1
server: {embedded: true}
models: [{name: simple, alias: b}, {name: delay, alias: a, shapes: {INPUT0: [16]}}]
`
	cases := []struct {
		name string
		src  string
		want []row
	}{
		{name: "alone and busy, compared", src: head + `
mixes:
  - {name: alone, models: {b: {concurrency: 1}}}
  - {name: busy, models: {a: {concurrency: 4}, b: {concurrency: 1}}}
comparisons: ["busy/b.p99 <= 1.2 * alone/b.p99"]
`, want: []row{
			{"alone/b/c=1", "alone/b", "alone", 1, 1, plan.LoadConcurrency, 1, 0, "", ""},
			{"busy/b/c=1", "busy/b", "busy", 2, 1, plan.LoadConcurrency, 1, 0, "", ""},
			{"busy/a/c=4", "busy/a", "busy", 2, 1, plan.LoadConcurrency, 4, 0, "", ""},
		}},
		{name: "a sweeps, b holds", src: head + `
sweep: {concurrency: [1, 4]}
mixes:
  - {name: alone, models: {b: {concurrency: 2}}}
  - {name: busy, models: {a: {concurrency: sweep}, b: {concurrency: 2}}}
comparisons: ["busy/b.p99 <= 1.2 * alone/b.p99"]
`, want: []row{
			{"alone/b/c=2@c=1", "alone/b", "alone", 1, 1, plan.LoadConcurrency, 2, 0, "1", ""},
			{"busy/b/c=2@c=1", "busy/b", "busy", 2, 1, plan.LoadConcurrency, 2, 0, "1", ""},
			{"busy/a/c=1@c=1", "busy/a", "busy", 2, 1, plan.LoadConcurrency, 1, 0, "1", ""},
			{"alone/b/c=2@c=4", "alone/b", "alone", 3, 2, plan.LoadConcurrency, 2, 0, "4", ""},
			{"busy/b/c=2@c=4", "busy/b", "busy", 4, 2, plan.LoadConcurrency, 2, 0, "4", ""},
			{"busy/a/c=4@c=4", "busy/a", "busy", 4, 2, plan.LoadConcurrency, 4, 0, "4", ""},
		}},
		{name: "shares of a swept total rate, a fixed rate, not compared", src: head + `
sweep: {request_rate: [100, 200]}
mixes:
  - name: traffic
    request_rate: sweep
    models: {a: {share: 25%}, b: {share: 75%}}
`, want: []row{
			{"traffic/b/r=75@r=100", "traffic/b", "traffic", 1, 0, plan.LoadRequestRate, 0, 75, "", "100"},
			{"traffic/a/r=25@r=100", "traffic/a", "traffic", 1, 0, plan.LoadRequestRate, 0, 25, "", "100"},
			{"traffic/b/r=150@r=200", "traffic/b", "traffic", 2, 0, plan.LoadRequestRate, 0, 150, "", "200"},
			{"traffic/a/r=50@r=200", "traffic/a", "traffic", 2, 0, plan.LoadRequestRate, 0, 50, "", "200"},
		}},
		{name: "rate beside concurrency", src: head + `
mixes:
  - {name: m, models: {a: {request_rate: 30}, b: {concurrency: 2}}}
`, want: []row{
			{"m/b/c=2", "m/b", "m", 1, 0, plan.LoadConcurrency, 2, 0, "", ""},
			{"m/a/r=30", "m/a", "m", 1, 0, plan.LoadRequestRate, 0, 30, "", ""},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseString(t, tc.src, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Expand(s)
			if err != nil {
				t.Fatal(err)
			}
			var got []row
			for _, pt := range p.Points {
				got = append(got, row{pt.ID, pt.Model, pt.Mix, pt.Together, pt.Group, pt.Load.Mode, pt.Load.Concurrency, pt.Load.Rate,
					pt.Coords[CoordConcurrency], pt.Coords[CoordRequestRate]})
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("points (-want +got)\n%s", d)
			}
			for _, pt := range p.Points {
				m, ok := p.Model(pt.Model)
				if !ok || m.Mix != pt.Mix || pt.Model != m.Mix+"/"+m.Base {
					t.Errorf("%s: model %+v", pt.ID, m)
				}
			}
		})
	}
}

// Checks under mixes name members and whole mixes; a mix of one model has
// no whole-mix figures of its own to name.
func TestMixCheckNames(t *testing.T) {
	src := `
version: 1
server: {embedded: true}
models: [{name: simple, alias: b}, {name: delay, alias: a, shapes: {INPUT0: [16]}}]
mixes:
  - {name: alone, models: {b: {concurrency: 1}}}
  - {name: busy, models: {a: {concurrency: 4}, b: {concurrency: 1}}}
thresholds:
  - {check: throughput >= 10/s, models: [busy]}
  - {check: p99 < 1s, models: [busy/a]}
comparisons:
  - "busy.throughput >= 1.5 * alone/b.throughput"
`
	if _, err := parseString(t, src, nil); err != nil {
		t.Fatal(err)
	}
	bad := `
version: 1
server: {embedded: true}
models: [{name: simple, alias: b}]
mixes:
  - {name: alone, models: {b: {concurrency: 1}}}
thresholds:
  - {check: throughput >= 10/s, models: [alone, b]}
`
	_, err := parseString(t, bad, nil)
	want := "testdata/inline.yaml:8:42: thresholds[0].models[0]: no model has alias `alone` (did you mean `alone/b`?)\n" +
		"testdata/inline.yaml:8:49: thresholds[0].models[1]: no model has alias `b`; models: alone/b"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// A search or a ramp moves one model's load on its own; in a mix every
// model's load is the mix's, so the two are refused together, by line.
func TestMixRefusesSearchesAndStages(t *testing.T) {
	src := `
version: 1
server: {embedded: true}
models: [{name: simple, alias: b}]
mixes:
  - {name: alone, models: {b: {concurrency: 1}}}
searches:
  - {while: p99 < 50ms, concurrency: "1:8"}
`
	_, err := parseString(t, src, nil)
	if err == nil || !strings.Contains(err.Error(), "testdata/inline.yaml:7:1: searches: searches probe one model at a time; they cannot be combined with mixes") {
		t.Errorf("got %v", err)
	}
}

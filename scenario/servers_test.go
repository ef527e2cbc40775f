package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Points are expanded per (server, model): the same model on two servers
// is two arms with server/alias names, and arms compared across servers
// share an interleaving group at equal coordinates, as same-server arms do.
func TestExpandServers(t *testing.T) {
	type row struct {
		ID, Server, Model string
		Group             int
	}
	const two = `
version: 1
servers:
  released: {embedded: true, embedded_models: {delay: {delay: 10ms}}}
  candidate: {embedded: true, embedded_models: {delay: {delay: 14ms}}}
`
	cases := []struct {
		name string
		src  string
		want []row
	}{
		{name: "one server form unchanged", src: `
version: 1
server: {embedded: true}
models: [{name: delay}]
sweep: {concurrency: [1, 2]}
`, want: []row{{"delay/c=1", "", "delay", 0}, {"delay/c=2", "", "delay", 0}}},
		{name: "two servers, compared", src: two + `
models: [{name: released/delay}, {name: candidate/delay}]
sweep: {concurrency: [1, 2]}
comparisons: ["candidate/delay.p50 <= 1.15 * released/delay.p50"]
`, want: []row{
			{"released/delay/c=1", "released", "released/delay", 1},
			{"candidate/delay/c=1", "candidate", "candidate/delay", 1},
			{"released/delay/c=2", "released", "released/delay", 2},
			{"candidate/delay/c=2", "candidate", "candidate/delay", 2},
		}},
		{name: "two servers, not compared, not grouped", src: two + `
models: [{name: released/delay}, {name: candidate/delay}]
`, want: []row{
			{"released/delay/c=1", "released", "released/delay", 0},
			{"candidate/delay/c=1", "candidate", "candidate/delay", 0},
		}},
		{name: "alias is qualified by its server", src: two + `
models:
  - {name: released/delay, alias: slow}
  - {name: candidate/delay, alias: slow}
  - {name: candidate/simple}
comparisons:
  - {candidate: candidate/slow, reference: released/slow, metric: throughput, min_ratio: 0.9}
`, want: []row{
			{"released/slow/c=1", "released", "released/slow", 1},
			{"candidate/slow/c=1", "candidate", "candidate/slow", 1},
			{"candidate/simple/c=1", "candidate", "candidate/simple", 0},
		}},
		{name: "one named server: the server may be left out", src: `
version: 1
servers:
  only: {embedded: true}
models: [{name: simple}, {name: delay}]
comparisons: ["delay.p50 <= 2 * simple.p50"]
`, want: []row{
			{"only/simple/c=1", "only", "only/simple", 1},
			{"only/delay/c=1", "only", "only/delay", 1},
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
				got = append(got, row{pt.ID, pt.Server, pt.Model, pt.Group})
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("points (-want +got)\n%s", d)
			}
			for _, m := range p.Models {
				if p.Named() && !strings.HasPrefix(m.Alias, m.Server+"/") {
					t.Errorf("model %s on server %q: alias not qualified", m.Alias, m.Server)
				}
			}
		})
	}
}

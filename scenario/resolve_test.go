package scenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func parseString(t *testing.T, src string, getenv func(string) string) (*Scenario, error) {
	t.Helper()
	return Parse("testdata/inline.yaml", []byte(src), getenv)
}

func TestHeadersFromEnvironmentAreSecret(t *testing.T) {
	s, err := parseString(t, `
version: 1
server:
  url: localhost:8000
  headers:
    Authorization: "Bearer ${TRITON_TOKEN}"
    X-Plain: visible
models: [{name: simple}]
`, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Expand(s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Authorization": "Bearer s3cret", "X-Plain": "visible"}
	if d := cmp.Diff(want, p.Server().Headers); d != "" {
		t.Errorf("headers (-want +got)\n%s", d)
	}
	if d := cmp.Diff([]string{"Authorization"}, p.Server().Secret); d != "" {
		t.Errorf("secret (-want +got)\n%s", d)
	}
}

func TestEmbeddedModelParametersAcceptScalars(t *testing.T) {
	s, err := parseString(t, `
version: 1
server:
  embedded: true
  embedded_models:
    mlp_optimized: {slowdown: 2}
    delay: {delay: 5ms, error_rate: 0.01, stall: true}
models: [{name: delay}]
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Expand(s)
	want := map[string]map[string]string{
		"mlp_optimized": {"slowdown": "2"},
		"delay":         {"delay": "5ms", "error_rate": "0.01", "stall": "true"},
	}
	if d := cmp.Diff(want, p.Server().EmbeddedModels); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// Groups join compared models (transitively) at equal coordinates only;
// a model in no comparison is never grouped.
func TestGroups(t *testing.T) {
	s, err := parseString(t, `
version: 1
server: {embedded: true}
models:
  - {name: a}
  - {name: b}
  - {name: c}
  - {name: d}
sweep:
  concurrency: [1, 2]
  batch_size: [1, 4]
comparisons:
  - a.throughput >= 1.1 * b.throughput
  - c.p95 <= b.p95
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Expand(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Points) != 16 {
		t.Fatalf("%d points, want 16", len(p.Points))
	}
	byCoord := map[string]map[int]bool{}
	ids := map[string]bool{}
	for _, pt := range p.Points {
		if ids[pt.ID] {
			t.Errorf("duplicate id %s", pt.ID)
		}
		ids[pt.ID] = true
		suffix := pt.ID[strings.IndexByte(pt.ID, '/')+1:]
		if pt.Model == "d" {
			if pt.Group != 0 {
				t.Errorf("%s: ungrouped model has group %d", pt.ID, pt.Group)
			}
			continue
		}
		if pt.Group == 0 {
			t.Errorf("%s: compared model has no group", pt.ID)
		}
		if byCoord[suffix] == nil {
			byCoord[suffix] = map[int]bool{}
		}
		byCoord[suffix][pt.Group] = true
	}
	seen := map[int]bool{}
	for coord, groups := range byCoord {
		if len(groups) != 1 {
			t.Errorf("%s: a, b, c in groups %v, want one", coord, groups)
		}
		for g := range groups {
			if seen[g] {
				t.Errorf("group %d reused across coordinates", g)
			}
			seen[g] = true
		}
	}
	if !ids["a/c=2,b=4"] || !ids["d/c=1,b=1"] {
		t.Errorf("unexpected ids: %v", ids)
	}
}

func TestModeInferredFromRate(t *testing.T) {
	s, err := parseString(t, `
version: 1
server: {embedded: true}
models: [{name: simple}]
sweep: {request_rate: [12.5, 250.0]}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Expand(s)
	var got []string
	for _, pt := range p.Points {
		got = append(got, pt.ID+" "+pt.Coords[CoordRequestRate]+" "+string(pt.Load.Distribution))
	}
	want := []string{"simple/r=12.5 12.5 constant", "simple/r=250 250 constant"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

func TestExpandNeedsLoad(t *testing.T) {
	if _, err := Expand(&Scenario{}); err == nil {
		t.Error("Expand of an unloaded scenario succeeded")
	}
	_, err := Load("testdata/does-not-exist.yaml", nil)
	var errs *Errors
	if err == nil || errors.As(err, &errs) {
		t.Errorf("missing file: want a plain read error, got %v", err)
	}
}

func TestGateRequireGated(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want bool
	}{{"", false}, {"gate: {require_gated: true}\n", true}} {
		s, err := parseString(t, "version: 1\nserver: {url: localhost:8000}\nmodels: [{name: simple}]\n"+tt.src, testEnv)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Expand(s)
		if err != nil {
			t.Fatal(err)
		}
		if p.Checks.Gate.RequireGated != tt.want {
			t.Errorf("%q: require_gated %v, want %v", tt.src, p.Checks.Gate.RequireGated, tt.want)
		}
	}
}

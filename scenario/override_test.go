package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const overrideBase = `version: 1
name: ov
server:
  url: localhost:8000
models:
  - name: simple
  - name: delay
    shapes: {INPUT0: [16]}
measurement:
  window: 5s
`

// --set lays values over the document before any check: fields replaced,
// mappings and list items created on the way, YAML values of any shape.
func TestOverridesApply(t *testing.T) {
	set := []string{
		"measurement.window=500ms",
		"server.url=host:8001",
		"server.protocol=grpc",
		"models[1].batch_size=4",
		"models.0.alias=first",
		"sweep.concurrency=[1, 2, 4]",
		"server.headers.X-Team=perf",
	}
	s, err := ParseWith("ov.yaml", []byte(overrideBase), nil, set)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Expand(s)
	if err != nil {
		t.Fatal(err)
	}
	if p.Measurement.Window != 500*time.Millisecond || p.Server().URL != "host:8001" || p.Server().Protocol != "grpc" ||
		p.Models[0].Alias != "first" || p.Server().Headers["X-Team"] != "perf" || len(p.Points) != 6 || p.Points[1].BatchSize != 4 {
		t.Errorf("plan: window %s url %s proto %s alias %s headers %v points %d", p.Measurement.Window, p.Server().URL,
			p.Server().Protocol, p.Models[0].Alias, p.Server().Headers, len(p.Points))
	}
	if strings.Join(p.Overrides, ";") != strings.Join(set, ";") {
		t.Errorf("overrides recorded: %v", p.Overrides)
	}
	plain, err := Parse("ov.yaml", []byte(overrideBase), nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Hash != s.Hash {
		t.Errorf("the scenario hash is the file's: %s vs %s", s.Hash, plain.Hash)
	}
}

// A bad override is reported like a bad line of the file, naming the flag
// where the file would give file:line:col; every problem at once.
func TestOverrideErrors(t *testing.T) {
	tests := []struct {
		set  []string
		want []string
	}{
		{[]string{"measurement.window=5 sec", "load.concurency=2", "models[0].batch_size=0"}, []string{
			`--set measurement.window: "5 sec" is not a duration (examples: 500ms, 5s)`,
			"--set load.concurency: unknown field `concurency` (did you mean `concurrency`?)",
			"--set models[0].batch_size: must be >= 1 but found 0",
		}},
		{[]string{"sweep.concurrency=[1, 1]"}, []string{"--set sweep.concurrency: 1 is listed twice"}},
		{[]string{"measurement.window"}, []string{"--set measurement.window: want path=value (e.g. --set measurement.window=500ms)"}},
		{[]string{"models[5].name=x"}, []string{"--set models[5].name: models has 2 item(s); [5] is neither one of them nor the next"}},
		{[]string{"server.url.host=x"}, []string{"--set server.url.host: server.url is not a mapping, so it has no field `host`"}},
		{[]string{"measurement.window=[1"}, []string{"--set measurement.window: invalid YAML value:"}},
		{[]string{"a..b=1"}, []string{`--set a..b: "a..b" is not a field path`}},
	}
	for _, tc := range tests {
		_, err := ParseWith("ov.yaml", []byte(overrideBase), nil, tc.set)
		var errs *Errors
		if !errors.As(err, &errs) {
			t.Fatalf("%v: want *Errors, got %v", tc.set, err)
		}
		got := err.Error()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v:\n%s\nlacks %q", tc.set, got, w)
			}
		}
		if strings.Contains(got, "ov.yaml:") {
			t.Errorf("%v: an override's problem is placed in the file:\n%s", tc.set, got)
		}
	}
}

// Problems in the file itself keep their lines next to an override's.
func TestOverrideErrorsBesideTheFile(t *testing.T) {
	bad := strings.Replace(overrideBase, "window: 5s", "window: 5s\n  stability: 0%", 1)
	_, err := ParseWith("ov.yaml", []byte(bad), nil, []string{"measurement.max_trials=1"})
	got := err.Error()
	if !strings.Contains(got, "ov.yaml:11:14: measurement.stability: must be above 0%") || !strings.Contains(got, "--set measurement.max_trials: must be >= 3 but found 1") {
		t.Errorf("%s", got)
	}
}

func FuzzSetPath(f *testing.F) {
	for _, s := range []string{"measurement.window", "models[0].batch_size", "models.0.x", "a[1][2].b", "", ".", "a[", "[0]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := setPath(s)
		if err == nil && len(p) == 0 {
			t.Errorf("%q: empty path without an error", s)
		}
	})
}

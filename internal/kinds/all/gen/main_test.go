package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/all"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/schemas"
)

const schemasDir = "../../../../schemas"

// The committed schemas/ files are what the kinds make: adding a kind, or
// changing its facts, is followed by go generate ./schemas.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := generate(schemasDir, all.Kinds().All())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		have, err := os.ReadFile(filepath.Join(schemasDir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, f.data) {
			t.Errorf("schemas/%s differs from what the kinds of internal/kinds/all make: run %s", f.name, regenerate)
		}
	}
}

// fakeKind is a throwaway kind with settings of its own.
type fakeKind struct{}

func (fakeKind) Name() string { return "fake" }
func (fakeKind) Open(context.Context, *plan.Plan, kinds.Env) (kinds.Server, error) {
	return nil, nil
}
func (fakeKind) Facts() kinds.Facts {
	return kinds.Facts{
		About: "a kind of this test",
		Settings: []byte(`{"description": "kind fake: its settings.", "type": "object", "additionalProperties": false, "properties": {
  "depth": {"type": "integer", "minimum": 1},
  "pause": {"$ref": "#/$defs/duration"}
}}`),
		Protocol:  plan.ProtocolGRPC,
		InProcess: true,
	}
}

// A kind registered next to the others reaches the scenario schema (its
// name in the kind enum, its block with its keys checked) and the facts
// the scenario resolves with, by its own folder's declarations alone.
func TestNewKindReachesTheSchema(t *testing.T) {
	ks := append(all.Kinds().All(), fakeKind{})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, schemaFile), schemas.Scenario, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := write(dir, ks); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(dir, schemaFile))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(schemas.ScenarioURL, bytes.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(schemas.ScenarioURL)
	if err != nil {
		t.Fatal(err)
	}
	scenario := func(server string) any {
		var v any
		if err := json.Unmarshal([]byte(`{"version": 1, "server": `+server+`, "models": [{"name": "m"}]}`), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		server string
		bad    string // in the error; "" when valid
	}{
		{`{"kind": "fake", "fake": {"depth": 2, "pause": "5s"}}`, ""},
		{`{"kind": "grpc", "grpc": {"method": "a.B/C"}}`, ""},
		{`{"kind": "fake", "fake": {"deep": 2}}`, "additionalProperties 'deep' not allowed"},
		{`{"kind": "fake", "fake": {"pause": "soon"}}`, "does not match pattern"},
		{`{"kind": "fakes"}`, "value must be one of"},
	} {
		err := sch.Validate(scenario(tc.server))
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s: %v", tc.server, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%s: got %v, want an error with %q", tc.server, err, tc.bad)
		}
	}
	src, err := os.ReadFile(filepath.Join(dir, goFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{Name: "fake", Protocol: "grpc", InProcess: true}`; !strings.Contains(string(src), want) {
		t.Errorf("%s lacks %s:\n%s", goFile, want, src)
	}
	if !strings.Contains(string(doc), "fake (a kind of this test).") {
		t.Errorf("the kind description lacks the new kind")
	}
}

// A server property written by hand in the generated part is refused, not
// overwritten.
func TestHandWrittenPropertyInGeneratedPart(t *testing.T) {
	grpc := "\n" + indent + `"grpc": {`
	old := strings.Replace(string(schemas.Scenario), grpc, "\n"+indent+`"mine": {"type": "string"},`+grpc, 1)
	_, err := scenarioSchema([]byte(old), all.Kinds().All())
	if err == nil || !strings.Contains(err.Error(), `"mine"`) {
		t.Fatalf("got %v, want mine named as misplaced", err)
	}
}

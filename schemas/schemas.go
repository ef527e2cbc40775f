// Package schemas holds the JSON Schemas (draft 2020-12) of perfscen's two
// file formats, the scenario and the result document, embedded so that the
// loader and tests validate against exactly what is shipped.
package schemas

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

//go:generate go run ../internal/kinds/all/gen

// Scenario is scenario.schema.json.
//
//go:embed scenario.schema.json
var Scenario []byte

// Result is result.schema.json.
//
//go:embed result.schema.json
var Result []byte

// Schema URLs, as in each document's $id.
const (
	ScenarioURL = "https://github.com/perfscen/perfscen/schemas/scenario.schema.json"
	ResultURL   = "https://github.com/perfscen/perfscen/schemas/result.schema.json"
)

var (
	compileOnce sync.Once
	scenario    *jsonschema.Schema
	result      *jsonschema.Schema
	compileErr  error
)

func compile() {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	for url, doc := range map[string][]byte{ScenarioURL: Scenario, ResultURL: Result} {
		if err := c.AddResource(url, strings.NewReader(string(doc))); err != nil {
			compileErr = fmt.Errorf("loading schema %s: %w", url, err)
			return
		}
	}
	if scenario, compileErr = c.Compile(ScenarioURL); compileErr != nil {
		return
	}
	result, compileErr = c.Compile(ResultURL)
}

// ScenarioSchema returns the compiled scenario schema.
func ScenarioSchema() (*jsonschema.Schema, error) {
	compileOnce.Do(compile)
	return scenario, compileErr
}

// ResultSchema returns the compiled result schema.
func ResultSchema() (*jsonschema.Schema, error) {
	compileOnce.Do(compile)
	return result, compileErr
}

// Kind is what the scenario knows of one service kind (server.kind)
// besides its schema. The kinds own these facts (internal/kinds, each
// kind's Facts); kinds_gen.go is generated from them, as are the kind enum
// and the server.<kind> blocks of scenario.schema.json.
type Kind struct {
	Name string
	// Protocol is what the kind's points default to: http or grpc.
	Protocol string
	// InProcess kinds start their server inside perfscen: no url.
	InProcess bool
}

// KindNamed returns the kind of server.kind name; false for a name the
// scenario schema refuses.
func KindNamed(name string) (Kind, bool) {
	for _, k := range kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

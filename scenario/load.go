package scenario

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	goyaml "github.com/goccy/go-yaml"
	goyamlparser "github.com/goccy/go-yaml/parser"
	"gopkg.in/yaml.v3"

	"github.com/perfscen/perfscen/runner/plan"
)

// Load reads, validates and resolves a scenario file. getenv resolves
// ${VAR} references in server.headers (nil means no variables are set).
// Every problem in the file is returned at once as *Errors.
func Load(path string, getenv func(string) string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scenario: %w", err)
	}
	return Parse(path, b, getenv)
}

// LoadPlan is Load followed by Expand.
func LoadPlan(path string, getenv func(string) string) (*plan.Plan, error) {
	s, err := Load(path, getenv)
	if err != nil {
		return nil, err
	}
	return Expand(s)
}

// Parse is Load for bytes already read; name is used in messages and to
// resolve relative paths.
//
// The steps: YAML into a node tree → JSON-compatible value → JSON Schema
// → strict typed decode → semantic checks. Schema and semantic problems
// are reported together; a semantic problem on a field the schema already
// rejected is dropped as noise.
func Parse(name string, data []byte, getenv func(string) string) (*Scenario, error) {
	return ParseWith(name, data, getenv, nil)
}

// LoadWith is Load with --set overrides (path=value) laid over the file
// before it is checked; see applyOverrides.
func LoadWith(path string, getenv func(string) string, set []string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scenario: %w", err)
	}
	return ParseWith(path, b, getenv, set)
}

// LoadPlanWith is LoadWith followed by Expand.
func LoadPlanWith(path string, getenv func(string) string, set []string) (*plan.Plan, error) {
	s, err := LoadWith(path, getenv, set)
	if err != nil {
		return nil, err
	}
	return Expand(s)
}

// ParseWith is Parse with --set overrides: they are applied to the YAML
// tree before the schema and every other check, so a bad one is reported
// like a bad line of the file, naming the flag ("--set measurement.window:
// …"); the scenario records them (Scenario.Overrides).
func ParseWith(name string, data []byte, getenv func(string) string, set []string) (*Scenario, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c := &collector{file: name, set: set}
	raw := data // the file's bytes: the scenario's hash is the file's
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Errors{List: []Error{locateSyntaxError(name, data, err)}}
	}
	if len(set) > 0 {
		if doc.Kind == 0 {
			doc.Kind = yaml.DocumentNode
		}
		if errs := applyOverrides(&doc, set); len(errs) > 0 {
			return nil, &Errors{List: errs}
		}
		// The typed decode below reads the document with the overrides.
		b, err := yaml.Marshal(&doc)
		if err != nil {
			return nil, &Errors{List: []Error{{File: name, Msg: "applying --set: " + err.Error()}}}
		}
		data = b
	}
	if len(doc.Content) == 0 {
		return nil, &Errors{List: []Error{{File: name, Line: 1, Col: 1, Msg: "empty scenario: expected a mapping with version: 1 and models"}}}
	}
	c.root = &doc
	cv := converter{c: c}
	v, ok := cv.value(&doc, nil, 0)
	if err := validateSchema(c, v); err != nil {
		return nil, err
	}
	if !ok {
		return nil, c.result()
	}
	schemaErrs := len(c.errs)

	var s Scenario
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			if schemaErrs == 0 {
				c.errs = append(c.errs, syntaxError(name, err))
			}
			return nil, c.result()
		}
		if schemaErrs == 0 {
			for _, msg := range te.Errors {
				c.errs = append(c.errs, syntaxError(name, errors.New(msg)))
			}
		}
	}
	s.Path = name
	sum := sha256.Sum256(raw)
	s.Hash = hex.EncodeToString(sum[:])
	s.Overrides = append([]string(nil), set...)

	sem := &collector{file: name, root: &doc, set: set}
	s.res = resolve(&s, sem, getenv, filepath.Dir(name))
	c.errs = append(c.errs, dropShadowed(sem.errs, c.errs[:schemaErrs])...)
	if len(c.errs) > 0 {
		return nil, c.result()
	}
	return &s, nil
}

func (c *collector) result() error {
	if len(c.errs) == 0 {
		return nil
	}
	e := &Errors{List: c.errs}
	e.sort()
	return e
}

// dropShadowed removes semantic errors about fields the schema already
// rejected (or inside them, or a list one of whose items it rejected):
// they would only repeat the cause in other words.
func dropShadowed(sem, schema []Error) []Error {
	var out []Error
next:
	for _, e := range sem {
		for _, s := range schema {
			if s.Path == "" {
				continue
			}
			// The schema's message about a part of this field (a list
			// item) is the same mistake said more precisely.
			if e.Path == s.Path || within(e.Path, s.Path) || strings.HasPrefix(s.Path, e.Path+"[") {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

func within(p, parent string) bool {
	return parent != "" && (strings.HasPrefix(p, parent+".") || strings.HasPrefix(p, parent+"["))
}

// locateSyntaxError places a YAML syntax error at its offending token.
// yaml.v3 reports only a line, and for parser errors the line where the
// enclosing construct began, counted from 0 (so a flow list left open on
// line 6 is "line 5"); goccy/go-yaml's parser reports the token it could
// not place, with its column. Where that parser accepts what yaml.v3
// refused (the two differ on a few corner cases), yaml.v3's own message
// and line stand.
func locateSyntaxError(file string, data []byte, err error) Error {
	var se *goyaml.SyntaxError
	if _, perr := goyamlparser.ParseBytes(data, 0); errors.As(perr, &se) && se.Token != nil && se.Token.Position != nil {
		return Error{File: file, Line: se.Token.Position.Line, Col: se.Token.Position.Column, Msg: "invalid YAML: " + se.Message}
	}
	return syntaxError(file, err)
}

var lineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// syntaxError locates a yaml.v3 error message ("yaml: line 3: …").
func syntaxError(file string, err error) Error {
	msg := err.Error()
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Error{File: file, Line: line, Msg: "invalid YAML: " + m[2]}
	}
	return Error{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

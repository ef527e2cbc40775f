package schemas_test

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
	"github.com/perfscen/perfscen/schemas"
)

// walker compares a Go type's tagged fields with a schema's properties,
// recursively, so a field added on one side only fails a test.
type walker struct {
	t    *testing.T
	root map[string]any
	tag  string
}

func (w walker) resolve(node map[string]any) map[string]any {
	for i := 0; i < 10; i++ {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		name := strings.TrimPrefix(ref, "#/$defs/")
		node = w.root["$defs"].(map[string]any)[name].(map[string]any)
	}
	return node
}

// branch finds, among node and its oneOf/anyOf alternatives, the first
// schema that has key.
func (w walker) branch(node map[string]any, key string) map[string]any {
	node = w.resolve(node)
	if _, ok := node[key]; ok {
		return node
	}
	for _, alt := range []string{"oneOf", "anyOf"} {
		list, _ := node[alt].([]any)
		for _, b := range list {
			if found := w.branch(b.(map[string]any), key); found != nil {
				return found
			}
		}
	}
	return nil
}

var (
	timeType        = reflect.TypeOf(time.Time{})
	yamlUnmarshaler = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
)

func (w walker) walk(where string, typ reflect.Type, node map[string]any) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case typ == timeType:
		return
	case typ.Kind() == reflect.Struct:
		obj := w.branch(node, "properties")
		if obj == nil {
			w.t.Errorf("%s: Go struct %s has no object schema", where, typ)
			return
		}
		props := obj["properties"].(map[string]any)
		fields := map[string]reflect.Type{}
		inline := false
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get(w.tag), ",")
			inline = inline || (opts == "inline" && f.Type.Kind() == reflect.Map)
			if !f.IsExported() || name == "-" || name == "" {
				continue
			}
			fields[name] = f.Type
		}
		for _, name := range sortedKeys(fields) {
			p, ok := props[name]
			if !ok {
				w.t.Errorf("%s.%s: field of %s is missing from the schema", where, name, typ)
				continue
			}
			w.walk(where+"."+name, fields[name], p.(map[string]any))
		}
		for name := range props {
			// A struct that keeps the rest inline (scenario.Server's kind
			// blocks) takes properties named after the kinds it names.
			if inline && w.isKind(props, name) {
				continue
			}
			if _, ok := fields[name]; !ok {
				w.t.Errorf("%s.%s: schema property has no field in %s", where, name, typ)
			}
		}
		if obj["additionalProperties"] != false {
			w.t.Errorf("%s: schema of %s must set additionalProperties: false", where, typ)
		}
	case typ.Kind() == reflect.Slice && typ.Elem().Kind() != reflect.Uint8 && !reflect.PointerTo(typ).Implements(yamlUnmarshaler):
		arr := w.branch(node, "items")
		if arr == nil {
			w.t.Errorf("%s: Go slice %s has no array schema", where, typ)
			return
		}
		w.walk(where+"[]", typ.Elem(), arr["items"].(map[string]any))
	case typ.Kind() == reflect.Map:
		obj := w.branch(node, "additionalProperties")
		if obj == nil {
			w.t.Errorf("%s: Go map %s has no object schema", where, typ)
			return
		}
		if ap, ok := obj["additionalProperties"].(map[string]any); ok {
			w.walk(where+"{}", typ.Elem(), ap)
		}
	}
}

// isKind reports whether name is a value of props' kind enum.
func (w walker) isKind(props map[string]any, name string) bool {
	k, _ := props["kind"].(map[string]any)
	enum, _ := k["enum"].([]any)
	for _, v := range enum {
		if v == name {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func schemaMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestScenarioSchemaMatchesStructs(t *testing.T) {
	root := schemaMap(t, schemas.Scenario)
	walker{t: t, root: root, tag: "yaml"}.walk("scenario", reflect.TypeOf(scenario.Scenario{}), root)
}

func TestResultSchemaMatchesStructs(t *testing.T) {
	root := schemaMap(t, schemas.Result)
	walker{t: t, root: root, tag: "json"}.walk("result", reflect.TypeOf(result.Run{}), root)
}

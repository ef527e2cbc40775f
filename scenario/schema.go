package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/perfscen/perfscen/schemas"
)

// patternHints turn "does not match pattern …" into what a person can act
// on, keyed by the $defs entry the pattern lives in.
var patternHints = map[string]string{
	"duration":       "is not a duration (examples: 500ms, 5s)",
	"percent":        "is not a percentage (examples: 10%, 2.5%)",
	"signed_percent": "is not a percentage (examples: -5%, +10%)",
	"size":           "is not a size (examples: 102400, 64KiB, 1MiB)",
	"range":          "is not a range (start:end:step, e.g. 8:128:8)",
}

var schemaDoc = func() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(schemas.Scenario, &m); err != nil {
		panic("scenario schema is not JSON: " + err.Error())
	}
	return m
}()

// validateSchema checks v against the scenario schema and reports every
// leaf failure at the YAML position of the value it concerns.
func validateSchema(c *collector, v any) error {
	sch, err := schemas.ScenarioSchema()
	if err != nil {
		return err
	}
	err = sch.Validate(v)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil
	}
	if !errors.As(err, &ve) {
		return err
	}
	before := len(c.errs)
	reportSchema(c, v, ve)
	if len(c.errs) == before { // never lose a failure
		c.at(nil, "%s", ve.Error())
	}
	return nil
}

func reportSchema(c *collector, doc any, ve *jsonschema.ValidationError) {
	kw := lastSeg(ve.KeywordLocation)
	if (kw == "oneOf" || kw == "anyOf") && len(ve.Causes) > 0 {
		reportAlternatives(c, doc, ve)
		return
	}
	if len(ve.Causes) > 0 {
		for _, cause := range ve.Causes {
			reportSchema(c, doc, cause)
		}
		return
	}
	p := pointerPath(ve.InstanceLocation)
	switch kw {
	case "additionalProperties":
		allowed := propertyNames(ve.AbsoluteKeywordLocation)
		for _, name := range quotedNames(ve.Message) {
			msg := fmt.Sprintf("unknown field `%s`", name)
			if len(allowed) > 0 {
				if s := suggest(name, allowed); s != "" {
					msg += s
				} else {
					msg += "; allowed: " + strings.Join(allowed, ", ")
				}
			}
			c.atKey(p.child(name), "%s", msg)
		}
	case "required":
		for _, name := range quotedNames(ve.Message) {
			c.at(p, "missing required field `%s`", name)
		}
	case "pattern":
		hint := patternHints[defName(ve.AbsoluteKeywordLocation)]
		if hint == "" {
			hint = "is not valid: " + ve.Message
		}
		c.at(p, "%s %s", describe(valueAt(doc, p)), hint)
	case "const", "enum":
		if p.String() == "version" {
			c.at(p, "version %s is not supported; this perfscen reads version 1", describe(valueAt(doc, p)))
			return
		}
		c.at(p, "%s is not allowed: %s", describe(valueAt(doc, p)), strings.TrimPrefix(ve.Message, "value "))
	case "type":
		c.at(p, "%s", strings.Replace(ve.Message, ", but got", ", got", 1))
	default:
		c.at(p, "%s", ve.Message)
	}
}

// reportAlternatives explains a failed oneOf/anyOf by the branches whose
// JSON type fits the value; when none fits, it lists the accepted types.
func reportAlternatives(c *collector, doc any, ve *jsonschema.ValidationError) {
	if def := defName(ve.AbsoluteKeywordLocation); def == "int_values" || def == "number_values" {
		p := pointerPath(ve.InstanceLocation)
		if msg, ok := singleValue(p, valueAt(doc, p), def == "int_values"); ok {
			c.at(p, "%s", msg)
			return
		}
	}
	var fitting []*jsonschema.ValidationError
	var types []string
	for _, b := range ve.Causes {
		if t, ok := typeMismatch(b, ve.InstanceLocation); ok {
			types = append(types, t)
			continue
		}
		fitting = append(fitting, b)
	}
	if len(fitting) == 0 {
		p := pointerPath(ve.InstanceLocation)
		c.at(p, "expected %s, got %s", strings.Join(uniq(types), " or "), jsonTypeOf(valueAt(doc, p)))
		return
	}
	// Of the branches whose type fits, the one that got deepest into the
	// value is the one the author meant (a list of protocols with one bad
	// item, not "a list is not a protocol"); ties go to schema order.
	best, bestDepth := fitting[0], leafDepth(fitting[0])
	for _, b := range fitting[1:] {
		if d := leafDepth(b); d > bestDepth {
			best, bestDepth = b, d
		}
	}
	reportSchema(c, doc, best)
}

// oneSetting names, for a swept dimension, the key that sets it once.
var oneSetting = map[string]string{"concurrency": "load.concurrency", "request_rate": "load.request_rate", "batch_size": "the model's batch_size"}

// singleValue explains a swept dimension given one value (1, or "1"),
// which is neither a list nor a range: it points to the key that sets
// one level, or to a list of one.
func singleValue(p path, v any, integer bool) (string, bool) {
	var num string
	switch v := v.(type) {
	case json.Number:
		num = v.String()
	case string:
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return "", false
		}
		num = strings.TrimSpace(v)
	default:
		return "", false
	}
	name := ""
	if len(p) > 0 {
		name, _ = p[len(p)-1].(string)
	}
	msg := fmt.Sprintf("%s is one value, and a sweep takes a list ([%s, …]) or a range (start:end:step, e.g. 8:128:8)", describe(v), num)
	_, notInt := strconv.Atoi(num)
	if key, ok := oneSetting[name]; ok && len(p) == 2 && p[0] == "sweep" && (!integer || notInt == nil) {
		msg += fmt.Sprintf("; for one level write %s: %s", key, num)
	}
	return msg, true
}

// leafDepth is the deepest instance location among e's leaf errors.
func leafDepth(e *jsonschema.ValidationError) int {
	if len(e.Causes) == 0 {
		return strings.Count(e.InstanceLocation, "/")
	}
	d := 0
	for _, c := range e.Causes {
		d = max(d, leafDepth(c))
	}
	return d
}

// typeMismatch says whether branch b failed only because the value at loc
// has the wrong JSON type, and which types b accepts.
func typeMismatch(b *jsonschema.ValidationError, loc string) (string, bool) {
	for len(b.Causes) == 1 { // through $ref wrappers
		b = b.Causes[0]
	}
	if b.InstanceLocation != loc || len(b.Causes) != 0 {
		return "", false
	}
	if lastSeg(b.KeywordLocation) != "type" {
		return "", false
	}
	if m := typeMsgRE.FindStringSubmatch(b.Message); m != nil {
		return m[1], true
	}
	return "", false
}

var typeMsgRE = regexp.MustCompile(`^expected (.+), but got`)

func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		for _, t := range strings.Split(s, " or ") {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

func lastSeg(loc string) string {
	if i := strings.LastIndexByte(loc, '/'); i >= 0 {
		return loc[i+1:]
	}
	return loc
}

// pointerPath turns a JSON pointer into a field path.
func pointerPath(ptr string) path {
	if ptr == "" || ptr == "/" {
		return nil
	}
	var p path
	for _, s := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
		if i, err := strconv.Atoi(s); err == nil && strconv.Itoa(i) == s {
			p = append(p, i)
		} else {
			p = append(p, s)
		}
	}
	return p
}

var quotedRE = regexp.MustCompile(`'((?:[^'\\]|\\.)*)'`)

// quotedNames extracts the property names the validator quoted.
func quotedNames(msg string) []string {
	var out []string
	for _, m := range quotedRE.FindAllStringSubmatch(msg, -1) {
		if s, err := strconv.Unquote(`"` + m[1] + `"`); err == nil {
			out = append(out, s)
		} else {
			out = append(out, m[1])
		}
	}
	return out
}

// defName returns the $defs entry an absolute keyword location is in.
func defName(abs string) string {
	const marker = "#/$defs/"
	i := strings.Index(abs, marker)
	if i < 0 {
		return ""
	}
	rest := abs[i+len(marker):]
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// propertyNames lists the properties allowed next to the failing
// additionalProperties keyword, for "did you mean" suggestions.
func propertyNames(abs string) []string {
	i := strings.IndexByte(abs, '#')
	if i < 0 {
		return nil
	}
	var node any = schemaDoc
	segs := strings.Split(strings.TrimPrefix(abs[i+1:], "/"), "/")
	for _, s := range segs[:len(segs)-1] {
		switch n := node.(type) {
		case map[string]any:
			node = n[s]
		case []any:
			k, err := strconv.Atoi(s)
			if err != nil || k >= len(n) {
				return nil
			}
			node = n[k]
		default:
			return nil
		}
	}
	obj, _ := node.(map[string]any)
	props, _ := obj["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func valueAt(doc any, p path) any {
	v := doc
	for _, s := range p {
		switch s := s.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[s]
		case int:
			a, ok := v.([]any)
			if !ok || s >= len(a) {
				return nil
			}
			v = a[s]
		}
	}
	return v
}

func describe(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case json.Number:
		return v.String()
	case nil:
		return "null"
	default:
		return fmt.Sprint(v)
	}
}

func jsonTypeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

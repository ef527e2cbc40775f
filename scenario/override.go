package scenario

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// An override is one --set path=value, laid over the document before it
// is checked: the value is YAML (500ms, 8001, [1, 2, 4], {delay: 5ms}),
// the path a field path as errors write it (measurement.window,
// models[0].batch_size; models.0.batch_size works too). Missing mappings
// on the way are created; a list index must exist, or be the list's
// length to append.
//
// The nodes an override brings carry a negative line (−1 for the first
// --set, −2 for the second, …), so an error about them names the flag
// instead of a line of the file: "--set measurement.window: …".

var segmentRE = regexp.MustCompile(`^([^.\[\]]+)((?:\[\d+\])*)$`)

// setPath splits "models[0].shapes.INPUT0" into keys and indexes.
func setPath(s string) (path, error) {
	if s == "" {
		return nil, fmt.Errorf("empty path (want path=value, e.g. measurement.window=500ms)")
	}
	var p path
	for _, part := range strings.Split(s, ".") {
		m := segmentRE.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("%q is not a field path (e.g. measurement.window or models[0].batch_size)", s)
		}
		if n, err := strconv.Atoi(m[1]); err == nil && len(p) > 0 {
			p = append(p, n) // models.0.batch_size
		} else {
			p = append(p, m[1])
		}
		for _, idx := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			n, _ := strconv.Atoi(idx)
			p = append(p, n)
		}
	}
	return p, nil
}

// applyOverrides lays each override over doc; a malformed one is an error
// naming its flag.
func applyOverrides(doc *yaml.Node, set []string) []Error {
	var errs []Error
	for i, expr := range set {
		at, value, ok := strings.Cut(expr, "=")
		at = strings.TrimSpace(at)
		if !ok {
			errs = append(errs, Error{Set: at, Msg: "want path=value (e.g. --set measurement.window=500ms)"})
			continue
		}
		p, err := setPath(at)
		if err != nil {
			errs = append(errs, Error{Set: at, Msg: err.Error()})
			continue
		}
		var v yaml.Node
		if err := yaml.Unmarshal([]byte(value), &v); err != nil {
			errs = append(errs, Error{Set: at, Msg: "invalid YAML value: " + strings.TrimPrefix(err.Error(), "yaml: ")})
			continue
		}
		val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
		if len(v.Content) > 0 {
			val = v.Content[0]
		}
		mark(val, -(i + 1))
		if err := setAt(doc, p, val, -(i + 1)); err != nil {
			errs = append(errs, Error{Set: at, Msg: err.Error()})
		}
	}
	return errs
}

// mark gives every node of n's tree the override's line.
func mark(n *yaml.Node, line int) {
	n.Line, n.Column = line, 0
	for _, c := range n.Content {
		mark(c, line)
	}
}

func setAt(doc *yaml.Node, p path, val *yaml.Node, line int) error {
	if doc.Kind != yaml.DocumentNode {
		return fmt.Errorf("not a YAML document")
	}
	if len(doc.Content) == 0 {
		doc.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map", Line: line}}
	}
	n := doc.Content[0]
	for i, seg := range p {
		last := i == len(p)-1
		switch seg := seg.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return fmt.Errorf("%s is not a mapping, so it has no field `%s`", p[:i].String(), seg)
			}
			var next *yaml.Node
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == seg {
					if last {
						n.Content[j].Line = line // the key an error about the field points at
						n.Content[j+1] = val
						return nil
					}
					next = n.Content[j+1]
				}
			}
			if next == nil {
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg, Line: line}
				next = val
				if !last {
					next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
					if _, isIdx := p[i+1].(int); isIdx {
						next = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: line}
					}
				}
				n.Content = append(n.Content, key, next)
				if last {
					return nil
				}
			}
			n = next
		case int:
			if n.Kind != yaml.SequenceNode {
				return fmt.Errorf("%s is not a list, so it has no [%d]", p[:i].String(), seg)
			}
			switch {
			case seg < len(n.Content):
				if last {
					n.Content[seg] = val
					return nil
				}
				n = n.Content[seg]
			case seg == len(n.Content):
				next := val
				if !last {
					next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
				}
				n.Content = append(n.Content, next)
				if last {
					return nil
				}
				n = next
			default:
				return fmt.Errorf("%s has %d item(s); [%d] is neither one of them nor the next", p[:i].String(), len(n.Content), seg)
			}
		}
	}
	return nil
}

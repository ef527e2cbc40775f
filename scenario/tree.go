package scenario

import (
	"encoding/json"
	"math"
	"strconv"

	"gopkg.in/yaml.v3"
)

// maxNodes bounds the JSON value built from YAML: aliases can expand a
// small file exponentially ("billion laughs").
const maxNodes = 200000

// toJSON converts a YAML node into the value encoding/json would produce,
// so the JSON Schema sees exactly the document the user wrote. Problems
// that JSON cannot express (non-string keys, duplicate keys) are reported
// to c and the offending entry is skipped.
type converter struct {
	c     *collector
	nodes int
}

func (cv *converter) value(n *yaml.Node, p path, depth int) (any, bool) {
	n = deref(n)
	cv.nodes++
	if n == nil || cv.nodes > maxNodes || depth > 100 {
		if cv.nodes == maxNodes+1 || depth == 101 {
			cv.c.at(p, "document too large or too deeply nested (check for recursive aliases)")
		}
		return nil, false
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, true
		}
		return cv.value(n.Content[0], p, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		ok := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := deref(n.Content[i])
			if k == nil || k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!int" && k.Tag != "!!bool" && k.Tag != "!!float") {
				cv.c.add(k, p, "mapping keys must be plain strings")
				ok = false
				continue
			}
			if k.Tag == "!!str" && k.Value == "<<" {
				cv.c.add(k, p, "merge keys (<<) are not supported; repeat the fields instead")
				ok = false
				continue
			}
			if _, dup := m[k.Value]; dup {
				cv.c.add(k, p.child(k.Value), "duplicate key `"+k.Value+"`")
				ok = false
				continue
			}
			v, vok := cv.value(n.Content[i+1], p.child(k.Value), depth+1)
			ok = ok && vok
			m[k.Value] = v
		}
		return m, ok
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		ok := true
		for i, e := range n.Content {
			v, vok := cv.value(e, p.child(i), depth+1)
			ok = ok && vok
			s = append(s, v)
		}
		return s, ok
	case yaml.ScalarNode:
		return scalar(n), true
	}
	return nil, true
}

// scalar maps YAML's resolved tags to JSON types; numbers stay exact as
// json.Number.
func scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return json.Number(strconv.FormatInt(i, 10))
		}
		var u uint64
		if n.Decode(&u) == nil {
			return json.Number(strconv.FormatUint(u, 10))
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		}
	}
	return n.Value
}

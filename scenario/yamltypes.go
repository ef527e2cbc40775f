package scenario

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// StringList accepts a scalar or a sequence of scalars and keeps each as
// written (numbers included), so units and ranges are parsed in one place.
type StringList []string

// UnmarshalYAML implements yaml.Unmarshaler.
func (l *StringList) UnmarshalYAML(n *yaml.Node) error {
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		*l = StringList{n.Value}
		return nil
	case yaml.SequenceNode:
		out := make(StringList, 0, len(n.Content))
		for _, c := range n.Content {
			c = deref(c)
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: expected a scalar", c.Line)
			}
			out = append(out, c.Value)
		}
		*l = out
		return nil
	}
	return fmt.Errorf("line %d: expected a scalar or a list", n.Line)
}

// UnmarshalYAML implements yaml.Unmarshaler: a scalar is the expression.
func (t *Threshold) UnmarshalYAML(n *yaml.Node) error {
	if d := deref(n); d.Kind == yaml.ScalarNode {
		*t = Threshold{Check: d.Value}
		return nil
	}
	type plain Threshold
	return n.Decode((*plain)(t))
}

// UnmarshalYAML implements yaml.Unmarshaler: a scalar is the sentence form.
func (c *Comparison) UnmarshalYAML(n *yaml.Node) error {
	if d := deref(n); d.Kind == yaml.ScalarNode {
		*c = Comparison{Sentence: d.Value}
		return nil
	}
	type plain Comparison
	return n.Decode((*plain)(c))
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

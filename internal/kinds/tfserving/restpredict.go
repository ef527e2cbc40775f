package tfserving

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/perfscen/perfscen/internal/tensor"
)

// REST request formats (api_rest.md, "Request format").
const (
	// formatRow is {"instances": [...]}: one entry per row of the first
	// dimension, named objects when the signature has several inputs.
	formatRow = "row"
	// formatColumnar is {"inputs": {...}}: each input whole.
	formatColumnar = "columnar"
)

// defaultSignature is what TF Serving runs when no signature is named.
const defaultSignature = "serving_default"

// tensorSpec is a signature tensor as the REST codec needs it.
type tensorSpec struct {
	Name     string
	DataType tensor.DataType
}

// encodePredictBody writes a :predict request. The signature name is left
// out when it is the default, as TF Serving's own examples do; one input
// is written bare in row format (instances of values), as the examples do,
// and every input by name in columnar format.
func encodePredictBody(signature, format string, inputs []tensor.Tensor) ([]byte, error) {
	if len(inputs) == 0 {
		return nil, errors.New("a predict request needs at least one input")
	}
	js := make([]*jsonTensor, len(inputs))
	for i, t := range inputs {
		j, err := newJSONTensor(t)
		if err != nil {
			return nil, err
		}
		js[i] = j
	}
	buf := []byte{'{'}
	if signature != "" && signature != defaultSignature {
		q, _ := json.Marshal(signature)
		buf = append(append(append(buf, `"signature_name":`...), q...), ',')
	}
	switch format {
	case formatColumnar:
		buf = append(buf, `"inputs":{`...)
		for i, j := range js {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendKey(buf, j.t.Name)
			buf = j.appendValue(buf, j.t.Shape, 0)
		}
		buf = append(buf, '}')
	default:
		rows, err := rowCount(inputs)
		if err != nil {
			return nil, err
		}
		buf = append(buf, `"instances":[`...)
		for r := range rows {
			if r > 0 {
				buf = append(buf, ',')
			}
			if len(js) == 1 {
				buf = js[0].appendRow(buf, r)
				continue
			}
			buf = append(buf, '{')
			for i, j := range js {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = appendKey(buf, j.t.Name)
				buf = j.appendRow(buf, r)
			}
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	return append(buf, '}'), nil
}

// rowCount is the first dimension every input shares: row format splits
// the inputs along it, so they must agree and have one.
func rowCount(ts []tensor.Tensor) (int, error) {
	for _, t := range ts {
		if len(t.Shape) == 0 {
			return 0, fmt.Errorf("input %s is a scalar, which row format (instances) cannot carry; use rest_format: columnar", t.Name)
		}
		if t.Shape[0] != ts[0].Shape[0] {
			return 0, fmt.Errorf("row format (instances) needs every input to have the same first dimension, but %s has %d and %s has %d; use rest_format: columnar",
				ts[0].Name, ts[0].Shape[0], t.Name, t.Shape[0])
		}
	}
	return int(ts[0].Shape[0]), nil
}

func (j *jsonTensor) appendRow(buf []byte, r int) []byte {
	stride := 1
	for _, d := range j.t.Shape[1:] {
		stride *= int(d)
	}
	return j.appendValue(buf, j.t.Shape[1:], r*stride)
}

func appendKey(buf []byte, name string) []byte {
	q, _ := json.Marshal(name)
	return append(append(buf, q...), ':')
}

// decodePredictReply reads a :predict answer: {"predictions": ...} to a
// row request, {"outputs": ...} to a columnar one, the output's name
// dropped when the signature has one output. outputs are the signature's,
// which give each value its dtype.
func decodePredictReply(body []byte, format string, outputs []tensorSpec) ([]tensor.Tensor, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, fmt.Errorf("reply is not JSON: %w", err)
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("reply is %s, not an object", jsonKind(v))
	}
	if msg, ok := top["error"].(string); ok {
		return nil, fmt.Errorf("server error: %s", msg)
	}
	key := "predictions"
	if format == formatColumnar {
		key = "outputs"
	}
	body2, ok := top[key]
	if !ok {
		return nil, fmt.Errorf("reply has no %q (keys: %s)", key, strings.Join(sortedKeys(top), ", "))
	}
	if len(outputs) == 0 {
		return nil, errors.New("the signature has no outputs to decode")
	}
	if format == formatColumnar {
		return decodeNamed(body2, outputs, func(name string, dt tensor.DataType, v any) (tensor.Tensor, error) {
			return valueTensor(name, dt, v)
		})
	}
	rows, ok := body2.([]any)
	if !ok {
		return nil, fmt.Errorf("predictions is %s, not a list", jsonKind(body2))
	}
	return decodeRows(rows, outputs)
}

// decodeNamed reads a columnar value: the value itself for one tensor, an
// object by name for several.
func decodeNamed(v any, specs []tensorSpec, build func(string, tensor.DataType, any) (tensor.Tensor, error)) ([]tensor.Tensor, error) {
	if len(specs) == 1 {
		if m, named := isNamed(v); named {
			if x, ok := m[specs[0].Name]; ok && len(m) == 1 {
				v = x
			}
		}
		t, err := build(specs[0].Name, specs[0].DataType, v)
		if err != nil {
			return nil, err
		}
		return []tensor.Tensor{t}, nil
	}
	m, ok := isNamed(v)
	if !ok {
		return nil, fmt.Errorf("%s where an object of tensors by name (%s) is expected", jsonKind(v), specNames(specs))
	}
	return buildByName(m, specs, func(s tensorSpec, x any) (tensor.Tensor, error) { return build(s.Name, s.DataType, x) })
}

// decodeRows reads row-format entries: values for one tensor, objects by
// name for several; each tensor is its rows stacked.
func decodeRows(rows []any, specs []tensorSpec) ([]tensor.Tensor, error) {
	if len(specs) == 1 {
		s := specs[0]
		// A single tensor may still come by name.
		if len(rows) > 0 {
			if m, named := isNamed(rows[0]); named && len(m) == 1 && m[s.Name] != nil {
				return decodeNamedRows(rows, specs)
			}
		}
		t, err := stack(s.Name, s.DataType, rows)
		if err != nil {
			return nil, err
		}
		return []tensor.Tensor{t}, nil
	}
	return decodeNamedRows(rows, specs)
}

func decodeNamedRows(rows []any, specs []tensorSpec) ([]tensor.Tensor, error) {
	cols := make(map[string][]any, len(specs))
	for i, r := range rows {
		m, ok := isNamed(r)
		if !ok {
			return nil, fmt.Errorf("entry %d is %s where an object of tensors by name (%s) is expected", i, jsonKind(r), specNames(specs))
		}
		for k, x := range m {
			cols[k] = append(cols[k], x)
		}
	}
	colsAny := make(map[string]any, len(cols))
	for k, c := range cols {
		if len(c) != len(rows) {
			return nil, fmt.Errorf("tensor %q is in %d of %d entries", k, len(c), len(rows))
		}
		colsAny[k] = c
	}
	return buildByName(colsAny, specs, func(s tensorSpec, x any) (tensor.Tensor, error) {
		return stack(s.Name, s.DataType, x.([]any))
	})
}

// buildByName builds each spec's tensor from m, refusing names the specs
// lack and specs m lacks.
func buildByName(m map[string]any, specs []tensorSpec, build func(tensorSpec, any) (tensor.Tensor, error)) ([]tensor.Tensor, error) {
	for k := range m {
		if !slices.ContainsFunc(specs, func(s tensorSpec) bool { return s.Name == k }) {
			return nil, fmt.Errorf("tensor %q is not in the signature (%s)", k, specNames(specs))
		}
	}
	out := make([]tensor.Tensor, 0, len(specs))
	for _, s := range specs {
		x, ok := m[s.Name]
		if !ok {
			return nil, fmt.Errorf("tensor %q is missing (the signature has %s)", s.Name, specNames(specs))
		}
		t, err := build(s, x)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func specNames(specs []tensorSpec) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// predictBody is a :predict request as the embedded flavour reads it.
type predictBody struct {
	Signature string
	Format    string
	Inputs    []tensor.Tensor
}

// decodePredictBody reads a :predict request against a signature's inputs:
// "instances" (rows) or "inputs" (columns), never both. sigInputs gives
// the signature to read by name; it is called once signature_name is known.
func decodePredictBody(body []byte, sigInputs func(signature string) ([]tensorSpec, error)) (*predictBody, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, fmt.Errorf("JSON Parse error: %w", err)
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("request is %s, not an object", jsonKind(v))
	}
	out := &predictBody{Signature: defaultSignature}
	if s, present := top["signature_name"]; present {
		name, ok := s.(string)
		if !ok {
			return nil, errors.New("'signature_name' key must be a string value")
		}
		if name != "" {
			out.Signature = name
		}
	}
	inst, hasInst := top["instances"]
	cols, hasCols := top["inputs"]
	switch {
	case hasInst && hasCols:
		return nil, errors.New("not allowed to mix 'instances' and 'inputs' keys in the same request")
	case !hasInst && !hasCols:
		return nil, errors.New("missing 'inputs' or 'instances' key")
	}
	specs, err := sigInputs(out.Signature)
	if err != nil {
		return nil, err
	}
	if hasCols {
		out.Format = formatColumnar
		out.Inputs, err = decodeNamed(cols, specs, valueTensor)
		return out, err
	}
	out.Format = formatRow
	rows, ok := inst.([]any)
	if !ok {
		return nil, fmt.Errorf("'instances' is %s, not a list", jsonKind(inst))
	}
	if len(specs) > 1 || (len(rows) > 0 && isNamedRow(rows[0], specs)) {
		out.Inputs, err = decodeNamedRows(rows, specs)
		return out, err
	}
	out.Inputs, err = decodeRows(rows, specs)
	return out, err
}

func isNamedRow(r any, specs []tensorSpec) bool {
	m, ok := isNamed(r)
	return ok && len(specs) == 1 && len(m) == 1 && m[specs[0].Name] != nil
}

// encodePredictReply writes the answer to a request of format: every
// output's rows under "predictions", or each output whole under
// "outputs"; one output without its name.
func encodePredictReply(format string, outputs []tensor.Tensor) ([]byte, error) {
	js := make([]*jsonTensor, len(outputs))
	for i, t := range outputs {
		j, err := newJSONTensor(t)
		if err != nil {
			return nil, err
		}
		js[i] = j
	}
	if format == formatColumnar {
		buf := []byte(`{"outputs":`)
		if len(js) == 1 {
			buf = js[0].appendValue(buf, js[0].t.Shape, 0)
			return append(buf, '}'), nil
		}
		buf = append(buf, '{')
		for i, j := range js {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendKey(buf, j.t.Name)
			buf = j.appendValue(buf, j.t.Shape, 0)
		}
		return append(buf, '}', '}'), nil
	}
	rows, err := rowCount(outputs)
	if err != nil {
		return nil, err
	}
	buf := []byte(`{"predictions":[`)
	for r := range rows {
		if r > 0 {
			buf = append(buf, ',')
		}
		if len(js) == 1 {
			buf = js[0].appendRow(buf, r)
			continue
		}
		buf = append(buf, '{')
		for i, j := range js {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendKey(buf, j.t.Name)
			buf = j.appendRow(buf, r)
		}
		buf = append(buf, '}')
	}
	return append(buf, ']', '}'), nil
}

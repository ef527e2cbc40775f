package inputdata

import (
	"fmt"
	"os"
)

// jsonFile is one input-data file after the structural checks: every step is
// an object, and validation_data, when present, mirrors data exactly.
type jsonFile struct {
	path     string
	src      []byte
	streamed bool      // "data" is a list of streams (sequence models)
	steps    [][]value // [stream][step] step objects; one stream when !streamed
	expect   [][]value // aligned with steps; nil when there is no validation_data
}

func readJSONFile(path string) (*jsonFile, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Stream: -1, Step: -1, Msg: "cannot read input data", Err: err}
	}
	return parseJSONFile(path, src)
}

// parseJSONFile checks the document's shape; tensors are checked later
// against the model.
func parseJSONFile(path string, src []byte) (*jsonFile, error) {
	l := loc{file: path, src: src, stream: -1, step: -1}
	root, err := parseJSON(src)
	if err != nil {
		se := err.(*syntaxError)
		e := l.errf(nil, "invalid JSON: %s", se.msg)
		e.Line, e.Column = lineCol(src, se.off)
		return nil, e
	}
	if root.kind != kObject {
		return nil, l.err(&root, `an object with a "data" list`, article(root.kind))
	}
	for i, k := range root.c.keys {
		if k != "data" && k != "validation_data" {
			at := root.c.keyAt[i]
			return nil, l.errf(&at, `unknown key %q (valid: "data", "validation_data")`, k)
		}
	}
	data, ok := root.field("data")
	if !ok {
		return nil, l.errf(&root, `missing "data"`)
	}
	f := &jsonFile{path: path, src: src}
	if f.steps, f.streamed, err = parseSteps(l, data); err != nil {
		return nil, err
	}
	if vd, ok := root.field("validation_data"); ok {
		lv := l
		lv.validation = true
		expect, streamed, err := parseSteps(lv, vd)
		if err != nil {
			return nil, err
		}
		if err := aligned(lv, vd, f, expect, streamed); err != nil {
			return nil, err
		}
		f.expect = expect
	}
	return f, nil
}

// parseSteps reads "data" (or "validation_data"): a non-empty list of step
// objects, or a non-empty list of non-empty lists of them.
func parseSteps(l loc, list value) ([][]value, bool, error) {
	if list.kind != kArray {
		return nil, false, l.err(&list, "a list of steps or of streams", article(list.kind))
	}
	if list.len() == 0 {
		return nil, false, l.errf(&list, "the list is empty")
	}
	streamed := list.elem(0).kind == kArray
	if !streamed {
		steps := make([]value, list.len())
		for i := range steps {
			s := list.elem(i)
			ls := l
			ls.step = i
			if s.kind == kArray {
				return nil, false, ls.errf(&s, "a stream (list) among steps (objects); use one form for the whole list")
			}
			if s.kind != kObject {
				return nil, false, ls.err(&s, "a step object", article(s.kind))
			}
			steps[i] = s
		}
		return [][]value{steps}, false, nil
	}
	streams := make([][]value, list.len())
	for si := range streams {
		st := list.elem(si)
		ls := l
		ls.stream = si
		if st.kind == kObject {
			return nil, false, ls.errf(&st, "a step (object) among streams (lists); use one form for the whole list")
		}
		if st.kind != kArray {
			return nil, false, ls.err(&st, "a stream (list of steps)", article(st.kind))
		}
		if st.len() == 0 {
			return nil, false, ls.errf(&st, "the stream is empty")
		}
		steps := make([]value, st.len())
		for i := range steps {
			s := st.elem(i)
			ls.step = i
			if s.kind != kObject {
				return nil, false, ls.err(&s, "a step object", article(s.kind))
			}
			steps[i] = s
		}
		streams[si] = steps
	}
	return streams, true, nil
}

// aligned enforces perf_analyzer's rule that validation_data pairs up with
// data entry by entry.
func aligned(l loc, vd value, f *jsonFile, expect [][]value, streamed bool) error {
	if streamed != f.streamed {
		return l.err(&vd, form(f.streamed)+" like \"data\"", form(streamed))
	}
	if !streamed {
		if len(expect[0]) != len(f.steps[0]) {
			return l.err(&vd, fmt.Sprintf("%d steps like \"data\"", len(f.steps[0])), fmt.Sprint(len(expect[0])))
		}
		return nil
	}
	if len(expect) != len(f.steps) {
		return l.err(&vd, fmt.Sprintf("%d streams like \"data\"", len(f.steps)), fmt.Sprint(len(expect)))
	}
	for i := range expect {
		if len(expect[i]) != len(f.steps[i]) {
			ls := l
			ls.stream = i
			at := vd.elem(i)
			return ls.err(&at, fmt.Sprintf("%d steps like \"data\"", len(f.steps[i])), fmt.Sprint(len(expect[i])))
		}
	}
	return nil
}

func form(streamed bool) string {
	if streamed {
		return "a list of streams"
	}
	return "a list of steps"
}

func article(k kind) string {
	switch k {
	case kArray, kObject:
		return "an " + k.String()
	case kNull:
		return "null"
	}
	return "a " + k.String()
}

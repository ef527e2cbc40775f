package grpc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/perfscen/perfscen/runner/plan"
)

// request is one call of the input data: the messages it sends, already
// serialised, and what its reply must be.
type request struct {
	msgs   [][]byte
	expect *expectation
	origin string
}

// The input data of a model of kind grpc (docs/scenario.md, kind grpc):
//
//   - a .json file: {"data": [entry, ...]}, each entry one call:
//     {"message": {...}} or, for client- and bidi-streaming methods,
//     {"messages": [{...}, ...]}; optionally "expected" (the reply; for
//     server-streaming methods the list of every reply) or
//     "expected_fields" ({"path.to.field": value}).
//   - any other file: perf_analyzer's dynamic-gRPC framing, messages
//     already serialised (framed.go).
//   - zero: one call with the empty message (every field its default).

// readInputs reads a model's input data for method md.
func readInputs(in plan.Input, md protoreflect.MethodDescriptor, types *dynamicpb.Types) ([]request, error) {
	switch in.Kind {
	case "zero":
		b, _ := proto.Marshal(dynamicpb.NewMessage(md.Input()))
		return []request{{msgs: [][]byte{b}, origin: "the empty message"}}, nil
	case "random":
		if md.Input().Fields().Len() == 0 {
			return []request{{msgs: [][]byte{nil}, origin: "the empty message"}}, nil
		}
		return nil, fmt.Errorf("input_data: kind grpc needs messages to send: a .json file ({\"data\": [{\"message\": {...}}]}), perf_analyzer's framed binary messages, or zero (every field of %s its default); random data has no meaning for a protobuf message", md.Input().FullName())
	case "dir":
		return nil, fmt.Errorf("input_data: kind grpc reads files of messages, not a folder (%s)", strings.Join(in.Paths, ", "))
	}
	var out []request
	for _, path := range in.Paths {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("input_data: %w", err)
		}
		var reqs []request
		if strings.EqualFold(filepath.Ext(path), ".json") {
			reqs, err = readJSONInput(path, src, md, types)
		} else {
			reqs, err = readFramed(path, src, md)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, reqs...)
	}
	return out, nil
}

// inputError is a fault in an input file, at a line and column when the
// file is JSON.
type inputError struct {
	file      string
	line, col int
	msg       string
}

func (e *inputError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.file, e.line, e.col, e.msg)
	}
	return fmt.Sprintf("%s: %s", e.file, e.msg)
}

// readJSONInput reads {"data": [entry, ...]}.
func readJSONInput(file string, src []byte, md protoreflect.MethodDescriptor, types *dynamicpb.Types) ([]request, error) {
	at := func(err error) error {
		var pe *posError
		if errors.As(err, &pe) {
			l, c := lineCol(src, pe.off)
			return &inputError{file: file, line: l, col: c, msg: pe.msg}
		}
		return &inputError{file: file, msg: err.Error()}
	}
	root, err := parseTree(src)
	if err != nil {
		return nil, at(err)
	}
	if root.kind != '{' {
		return nil, at(&posError{off: root.start, msg: fmt.Sprintf("want an object {\"data\": [...]}, found %s", root.kindName())})
	}
	for i, k := range root.keys {
		if k != "data" {
			return nil, at(&posError{off: root.keyAt[i], msg: fmt.Sprintf("unknown key %q (kind grpc input data has \"data\" only)", k)})
		}
	}
	data := root.field("data")
	if data == nil {
		return nil, at(&posError{off: root.start, msg: "no \"data\": want {\"data\": [{\"message\": {...}}, ...]}"})
	}
	if data.kind != '[' || len(data.elems) == 0 {
		return nil, at(&posError{off: data.start, msg: "\"data\" must be a non-empty list of calls"})
	}
	out := make([]request, 0, len(data.elems))
	for i, e := range data.elems {
		r, err := readEntry(src, e, fmt.Sprintf("data[%d]", i), md, types)
		if err != nil {
			return nil, at(err)
		}
		l, _ := lineCol(src, e.start)
		r.origin = fmt.Sprintf("%s:%d data[%d]", filepath.Base(file), l, i)
		if r.expect != nil {
			r.expect.origin = r.origin
		}
		out = append(out, r)
	}
	return out, nil
}

var entryKeys = []string{"message", "messages", "expected", "expected_fields"}

func readEntry(src []byte, e *jnode, path string, md protoreflect.MethodDescriptor, types *dynamicpb.Types) (request, error) {
	var r request
	if e.kind != '{' {
		return r, &posError{off: e.start, msg: fmt.Sprintf("%s: want an object {\"message\": {...}}, found %s", path, e.kindName())}
	}
	for i, k := range e.keys {
		switch {
		case k == "message_generator":
			return r, &posError{off: e.keyAt[i], msg: fmt.Sprintf("%s.message_generator: perfscen runs no programs; save the generator's output (perf_analyzer's framed messages) to a file and name that file in input_data", path)}
		case !slices.Contains(entryKeys, k):
			return r, &posError{off: e.keyAt[i], msg: fmt.Sprintf("%s: unknown key %q (keys: %s)", path, k, strings.Join(entryKeys, ", "))}
		}
	}
	one, many := e.field("message"), e.field("messages")
	switch {
	case one != nil && many != nil:
		return r, &posError{off: e.start, msg: path + ": give message or messages, not both"}
	case one != nil:
		b, err := encodeMessage(src, one, md.Input(), types, path+".message")
		if err != nil {
			return r, err
		}
		r.msgs = [][]byte{b}
	case many != nil:
		if many.kind != '[' || len(many.elems) == 0 {
			return r, &posError{off: many.start, msg: path + ".messages: want a non-empty list of messages"}
		}
		if !md.IsStreamingClient() && len(many.elems) > 1 {
			return r, &posError{off: many.start, msg: fmt.Sprintf("%s.messages: %s takes one message per call; write one entry per message", path, md.FullName())}
		}
		for j, m := range many.elems {
			b, err := encodeMessage(src, m, md.Input(), types, fmt.Sprintf("%s.messages[%d]", path, j))
			if err != nil {
				return r, err
			}
			r.msgs = append(r.msgs, b)
		}
	default:
		return r, &posError{off: e.start, msg: path + ": no message: want {\"message\": {...}}"}
	}
	exp, err := readExpected(src, e, path, md, types)
	if err != nil {
		return r, err
	}
	r.expect = exp
	return r, nil
}

func encodeMessage(src []byte, n *jnode, md protoreflect.MessageDescriptor, types *dynamicpb.Types, path string) ([]byte, error) {
	if n.kind != '{' && !specialJSON(md) {
		return nil, &posError{off: n.start, msg: fmt.Sprintf("%s: want a %s object, found %s", path, md.FullName(), n.kindName())}
	}
	msg, err := decodeMessage(src, n, md, types, path)
	if err != nil {
		return nil, err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return nil, &posError{off: n.start, msg: fmt.Sprintf("%s: %v", path, err)}
	}
	return b, nil
}

// readExpected reads an entry's "expected" and "expected_fields".
func readExpected(src []byte, e *jnode, path string, md protoreflect.MethodDescriptor, types *dynamicpb.Types) (*expectation, error) {
	whole, fields := e.field("expected"), e.field("expected_fields")
	if whole == nil && fields == nil {
		return nil, nil
	}
	out := md.Output()
	streaming := md.IsStreamingServer()
	exp := &expectation{}
	if whole != nil {
		p := path + ".expected"
		switch {
		case streaming && whole.kind != '[':
			return nil, &posError{off: whole.start, msg: fmt.Sprintf("%s: %s streams its replies: want the list of every reply, in order", p, md.FullName())}
		case streaming:
			exp.msgs = []*dynamicpb.Message{}
			for j, m := range whole.elems {
				msg, err := expectedMessage(src, m, out, types, fmt.Sprintf("%s[%d]", p, j))
				if err != nil {
					return nil, err
				}
				exp.msgs = append(exp.msgs, msg)
			}
		default:
			msg, err := expectedMessage(src, whole, out, types, p)
			if err != nil {
				return nil, err
			}
			exp.msgs = []*dynamicpb.Message{msg}
		}
	}
	if fields != nil {
		p := path + ".expected_fields"
		if fields.kind != '{' || len(fields.keys) == 0 {
			return nil, &posError{off: fields.start, msg: p + ": want an object of field paths and values, {\"name\": \"x\", \"location.latitude\": 1}"}
		}
		for i, k := range fields.keys {
			fc, err := parseFieldPath(k, out, streaming)
			if err != nil {
				return nil, &posError{off: fields.keyAt[i], msg: fmt.Sprintf("%s[%q]: %v", p, k, err)}
			}
			v := fields.vals[i]
			wrapper := dynamicpb.NewMessage(fc.parent(out))
			if err := unmarshalOptions(types).Unmarshal(fc.wrapExpected(v.raw(src)), wrapper); err != nil {
				_, text := protojsonPlace(err, nil)
				return nil, &posError{off: v.start, msg: fmt.Sprintf("%s[%q]: %s", p, k, text)}
			}
			fc.setWant(wrapper)
			exp.fields = append(exp.fields, fc)
		}
	}
	return exp, nil
}

func expectedMessage(src []byte, n *jnode, md protoreflect.MessageDescriptor, types *dynamicpb.Types, path string) (*dynamicpb.Message, error) {
	if n.kind != '{' && !specialJSON(md) {
		return nil, &posError{off: n.start, msg: fmt.Sprintf("%s: want a %s object, found %s", path, md.FullName(), n.kindName())}
	}
	return decodeMessage(src, n, md, types, path)
}

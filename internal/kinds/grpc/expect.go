package grpc

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// expectation is what one request's reply must be: whole messages
// ("expected": the reply, or for a streaming reply every message of the
// stream in order) or chosen fields ("expected_fields").
type expectation struct {
	origin string
	msgs   []*dynamicpb.Message
	fields []fieldCheck
}

// fieldCheck is one "expected_fields" entry.
type fieldCheck struct {
	path  string // as written
	reply int    // which reply of a stream; -1 for every reply
	steps []pathStep
	want  protoreflect.Value // the last step's value: one element when it is indexed
}

// pathStep is a field, and the list element when indexed.
type pathStep struct {
	fd    protoreflect.FieldDescriptor
	index int // -1: the whole field
}

var (
	replyIndexRE = regexp.MustCompile(`^\[(\d+)\]\.?`)
	segmentRE    = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$`)
)

// parseFieldPath resolves a path such as location.latitude or
// values[2], with a leading [i] choosing one reply of a stream, against
// the reply type md.
func parseFieldPath(path string, md protoreflect.MessageDescriptor, streaming bool) (fieldCheck, error) {
	fc := fieldCheck{path: path, reply: -1}
	rest := path
	if m := replyIndexRE.FindStringSubmatch(rest); m != nil {
		if !streaming {
			return fc, fmt.Errorf("a reply index [%s] applies only to streaming replies", m[1])
		}
		fc.reply, _ = strconv.Atoi(m[1])
		rest = rest[len(m[0]):]
	}
	if rest == "" {
		return fc, fmt.Errorf("names no field")
	}
	cur := md
	segs := strings.Split(rest, ".")
	for i, seg := range segs {
		m := segmentRE.FindStringSubmatch(seg)
		if m == nil {
			return fc, fmt.Errorf("%q is not a field name, optionally with an index [n]", seg)
		}
		if cur == nil {
			return fc, fmt.Errorf("%s is not a message, it has no field %s", strings.Join(segs[:i], "."), m[1])
		}
		fd := fieldByKey(cur, m[1])
		if fd == nil {
			return fc, fmt.Errorf("no field %q in %s (fields: %s)", m[1], cur.FullName(), strings.Join(fieldNames(cur), ", "))
		}
		st := pathStep{fd: fd, index: -1}
		if m[2] != "" {
			if !fd.IsList() {
				return fc, fmt.Errorf("%s is not a repeated field, it takes no index", fd.Name())
			}
			st.index, _ = strconv.Atoi(m[2])
		}
		last := i == len(segs)-1
		switch {
		case last:
		case fd.IsMap():
			return fc, fmt.Errorf("%s is a map: compare it whole, as the last field of the path", fd.Name())
		case fd.IsList() && st.index < 0:
			return fc, fmt.Errorf("%s is repeated: index it ([n]) to go into an element", fd.Name())
		case fd.Message() == nil:
			return fc, fmt.Errorf("%s is not a message, it has no field %s", fd.Name(), segs[i+1])
		}
		fc.steps = append(fc.steps, st)
		cur = fd.Message()
		if fd.IsMap() {
			cur = nil
		}
	}
	return fc, nil
}

// wrapExpected writes the JSON of a message of the last step's parent
// type holding only the expected value, so protojson decodes (and
// checks) the value with the field's own type.
func (fc fieldCheck) wrapExpected(value []byte) []byte {
	st := fc.steps[len(fc.steps)-1]
	v := string(value)
	if st.index >= 0 {
		v = "[" + v + "]"
	}
	return []byte(fmt.Sprintf("{%q: %s}", st.fd.JSONName(), v))
}

// setWant takes the expected value out of the decoded wrapper.
func (fc *fieldCheck) setWant(wrapper protoreflect.Message) {
	st := fc.steps[len(fc.steps)-1]
	v := wrapper.Get(st.fd)
	if st.index >= 0 {
		v = v.List().Get(0)
	}
	fc.want = v
}

// parent is the message type that holds the last step's field.
func (fc fieldCheck) parent(reply protoreflect.MessageDescriptor) protoreflect.MessageDescriptor {
	if len(fc.steps) == 1 {
		return reply
	}
	return fc.steps[len(fc.steps)-2].fd.Message()
}

// check compares a reply's field with the expected value.
func (fc fieldCheck) check(reply protoreflect.Message, tol float64) string {
	msg := reply
	for i, st := range fc.steps {
		v := msg.Get(st.fd)
		last := i == len(fc.steps)-1
		if st.index >= 0 {
			l := v.List()
			if st.index >= l.Len() {
				return fmt.Sprintf("%s: the reply's %s has %d elements", fc.path, st.fd.Name(), l.Len())
			}
			if last {
				return diffSingular(st.fd, fc.want, l.Get(st.index), tol, fc.path)
			}
			msg = l.Get(st.index).Message()
			continue
		}
		if last {
			return diffField(st.fd, fc.want, v, tol, fc.path)
		}
		msg = v.Message()
	}
	return ""
}

// check compares the replies of one call with e; "" when they match.
func (e *expectation) check(md protoreflect.MessageDescriptor, replies [][]byte, streaming bool, tol float64) string {
	got := make([]*dynamicpb.Message, len(replies))
	for i, b := range replies {
		got[i] = dynamicpb.NewMessage(md)
		if err := proto.Unmarshal(b, got[i]); err != nil {
			return fmt.Sprintf("%s: reply %d does not decode as %s: %v", e.origin, i, md.FullName(), err)
		}
	}
	if e.msgs != nil {
		if len(got) != len(e.msgs) {
			return fmt.Sprintf("%s: want %d replies, got %d", e.origin, len(e.msgs), len(got))
		}
		for i, w := range e.msgs {
			prefix := ""
			if streaming {
				prefix = fmt.Sprintf("[%d]", i)
			}
			if d := diffMessages(w, got[i], tol, prefix); d != "" {
				return e.origin + ": " + d
			}
		}
	}
	for _, fc := range e.fields {
		if fc.reply >= 0 {
			if fc.reply >= len(got) {
				return fmt.Sprintf("%s: %s: the stream had %d replies", e.origin, fc.path, len(got))
			}
			if d := fc.check(got[fc.reply], tol); d != "" {
				return e.origin + ": " + d
			}
			continue
		}
		for i, g := range got {
			if d := fc.check(g, tol); d != "" {
				if streaming {
					return fmt.Sprintf("%s: reply %d: %s", e.origin, i, d)
				}
				return e.origin + ": " + d
			}
		}
	}
	return ""
}

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

// pathStep is a field, and the list element when indexed, or the map
// entry when keyed.
type pathStep struct {
	fd     protoreflect.FieldDescriptor
	index  int // -1: the whole field
	key    protoreflect.MapKey
	keyed  bool
	keyStr string // as written
}

var (
	replyIndexRE = regexp.MustCompile(`^\[(\d+)\]\.?`)
	segmentRE    = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$`)
)

// parseFieldPath resolves a path such as location.latitude or
// values[2], with a leading [i] choosing one reply of a stream, against
// the reply type md. A map field is entered by its key, as the next
// segment: outputs.y.float_val (TF Serving's outputs map, key y, then its
// TensorProto's float_val), or outputs.y for the whole entry's value; a
// key may hold any character but the dot.
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
	for i := 0; i < len(segs); i++ {
		seg := segs[i]
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
		if fd.IsMap() && i < len(segs)-1 {
			// The next segment is the entry's key.
			i++
			k, err := mapKey(fd.MapKey(), segs[i])
			if err != nil {
				return fc, fmt.Errorf("%s: %v", fd.Name(), err)
			}
			st.key, st.keyed, st.keyStr = k, true, segs[i]
			fc.steps = append(fc.steps, st)
			cur = fd.MapValue().Message()
			if i < len(segs)-1 && cur == nil {
				return fc, fmt.Errorf("%s[%s] is not a message, it has no field %s", fd.Name(), segs[i], segs[i+1])
			}
			continue
		}
		last := i == len(segs)-1
		switch {
		case last:
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

// mapKey reads a map key written in a path as the map's key type.
func mapKey(fd protoreflect.FieldDescriptor, s string) (protoreflect.MapKey, error) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(s).MapKey(), nil
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return protoreflect.MapKey{}, fmt.Errorf("key %q is not a bool", s)
		}
		return protoreflect.ValueOfBool(b).MapKey(), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return protoreflect.MapKey{}, fmt.Errorf("key %q is not an int32", s)
		}
		return protoreflect.ValueOfInt32(int32(n)).MapKey(), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return protoreflect.MapKey{}, fmt.Errorf("key %q is not an int64", s)
		}
		return protoreflect.ValueOfInt64(n).MapKey(), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return protoreflect.MapKey{}, fmt.Errorf("key %q is not a uint32", s)
		}
		return protoreflect.ValueOfUint32(uint32(n)).MapKey(), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return protoreflect.MapKey{}, fmt.Errorf("key %q is not a uint64", s)
		}
		return protoreflect.ValueOfUint64(n).MapKey(), nil
	}
	return protoreflect.MapKey{}, fmt.Errorf("keys of kind %s are not supported", fd.Kind())
}

// wrapExpected writes the JSON of a message of the last step's parent
// type holding only the expected value, so protojson decodes (and
// checks) the value with the field's own type.
func (fc fieldCheck) wrapExpected(value []byte) []byte {
	st := fc.steps[len(fc.steps)-1]
	v := string(value)
	switch {
	case st.keyed:
		v = fmt.Sprintf("{%q: %s}", st.keyStr, v)
	case st.index >= 0:
		v = "[" + v + "]"
	}
	return []byte(fmt.Sprintf("{%q: %s}", st.fd.JSONName(), v))
}

// setWant takes the expected value out of the decoded wrapper.
func (fc *fieldCheck) setWant(wrapper protoreflect.Message) {
	st := fc.steps[len(fc.steps)-1]
	v := wrapper.Get(st.fd)
	switch {
	case st.keyed:
		v = v.Map().Get(st.key)
	case st.index >= 0:
		v = v.List().Get(0)
	}
	fc.want = v
}

// parent is the message type that holds the last step's field.
func (fc fieldCheck) parent(reply protoreflect.MessageDescriptor) protoreflect.MessageDescriptor {
	if len(fc.steps) == 1 {
		return reply
	}
	prev := fc.steps[len(fc.steps)-2]
	if prev.keyed {
		return prev.fd.MapValue().Message()
	}
	return prev.fd.Message()
}

// check compares a reply's field with the expected value.
func (fc fieldCheck) check(reply protoreflect.Message, tol float64) string {
	msg := reply
	for i, st := range fc.steps {
		v := msg.Get(st.fd)
		last := i == len(fc.steps)-1
		if st.keyed {
			m := v.Map()
			if !m.Has(st.key) {
				return fmt.Sprintf("%s: the reply's %s has no key %q", fc.path, st.fd.Name(), st.keyStr)
			}
			if last {
				return diffSingular(st.fd.MapValue(), fc.want, m.Get(st.key), tol, fc.path)
			}
			msg = m.Get(st.key).Message()
			continue
		}
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

package grpc

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// decodeMessage turns the JSON value n of src into a message of type md.
// Every key is first checked against the message's fields, recursively,
// so a misspelt field is reported with its JSON path, its place in the
// file and the fields there are; protojson then decodes the values.
func decodeMessage(src []byte, n *jnode, md protoreflect.MessageDescriptor, types *dynamicpb.Types, path string) (*dynamicpb.Message, error) {
	if err := checkKeys(n, md, path); err != nil {
		return nil, err
	}
	msg := dynamicpb.NewMessage(md)
	if err := unmarshalOptions(types).Unmarshal(n.raw(src), msg); err != nil {
		off, text := protojsonPlace(err, n.raw(src))
		return nil, &posError{off: n.start + off, msg: fmt.Sprintf("%s: %s", path, text)}
	}
	return msg, nil
}

// specialJSON are the well-known types whose JSON is not an object of
// their fields; protojson checks them itself.
func specialJSON(md protoreflect.MessageDescriptor) bool {
	name := string(md.FullName())
	if !strings.HasPrefix(name, "google.protobuf.") {
		return false
	}
	switch strings.TrimPrefix(name, "google.protobuf.") {
	case "Any", "Timestamp", "Duration", "FieldMask", "Struct", "Value", "ListValue",
		"DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value",
		"BoolValue", "StringValue", "BytesValue":
		return true
	}
	return false
}

// fieldByKey finds the field a JSON key names: protojson accepts the JSON
// name (lowerCamelCase) and the name in the .proto.
func fieldByKey(md protoreflect.MessageDescriptor, key string) protoreflect.FieldDescriptor {
	if fd := md.Fields().ByJSONName(key); fd != nil {
		return fd
	}
	return md.Fields().ByName(protoreflect.Name(key))
}

func checkKeys(n *jnode, md protoreflect.MessageDescriptor, path string) error {
	if n.kind != '{' || specialJSON(md) {
		return nil // protojson says what is wrong with the value
	}
	for i, key := range n.keys {
		if strings.HasPrefix(key, "[") || (key == "@type" && md.FullName() == "google.protobuf.Any") {
			continue // an extension, which protojson resolves
		}
		fd := fieldByKey(md, key)
		if fd == nil {
			return &posError{off: n.keyAt[i], msg: fmt.Sprintf("%s.%s: no field %q in %s (fields: %s)",
				path, key, key, md.FullName(), strings.Join(fieldNames(md), ", "))}
		}
		v := n.vals[i]
		sub := path + "." + key
		switch {
		case fd.IsMap():
			if fd.MapValue().Kind() != protoreflect.MessageKind || v.kind != '{' {
				continue
			}
			for j, k := range v.keys {
				if err := checkKeys(v.vals[j], fd.MapValue().Message(), fmt.Sprintf("%s[%q]", sub, k)); err != nil {
					return err
				}
			}
		case fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind:
		case fd.IsList():
			for j, e := range v.elems {
				if err := checkKeys(e, fd.Message(), fmt.Sprintf("%s[%d]", sub, j)); err != nil {
					return err
				}
			}
		default:
			if err := checkKeys(v, fd.Message(), sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldNames lists md's fields by their names in the .proto.
func fieldNames(md protoreflect.MessageDescriptor) []string {
	fs := md.Fields()
	if fs.Len() == 0 {
		return []string{"none"}
	}
	out := make([]string, fs.Len())
	for i := range fs.Len() {
		out[i] = string(fs.Get(i).Name())
	}
	return out
}

// protojson separates its prefix with a non-breaking space.
var protojsonPos = regexp.MustCompile(`^proto:[\s\x{00a0}]*\(line (\d+):(\d+)\):[\s\x{00a0}]*`)

// protojsonPlace finds where in raw a protojson error points (it counts
// lines and columns within the value it was given) and strips that from
// its text.
func protojsonPlace(err error, raw []byte) (int, string) {
	text := err.Error()
	m := protojsonPos.FindStringSubmatch(text)
	if m == nil {
		return 0, strings.TrimLeft(strings.TrimPrefix(text, "proto:"), " \u00a0")
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	off := 0
	for l := 1; l < line && off < len(raw); off++ {
		if raw[off] == '\n' {
			l++
		}
	}
	off = min(off+col-1, len(raw))
	return max(off, 0), text[len(m[0]):]
}

// unmarshalOptions decode JSON messages; types resolves the messages an
// Any names.
func unmarshalOptions(types *dynamicpb.Types) protojson.UnmarshalOptions {
	return protojson.UnmarshalOptions{Resolver: types}
}

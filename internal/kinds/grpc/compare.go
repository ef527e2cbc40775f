package grpc

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/perfscen/perfscen/validate"
)

// A reply is compared with what the input data expect field by field:
// floats within the model's float_tolerance (absolute and relative at
// once, as tensors are compared; 1e-5 when unset), everything else
// exactly. Values are compared, not presence: a field left unset equals
// one set to its default.

// diffMessages is the first difference between want and got, "" when
// they match; path prefixes the field names it reports.
func diffMessages(want, got protoreflect.Message, tol float64, path string) string {
	fields := want.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if d := diffField(fd, want.Get(fd), got.Get(fd), tol, join(path, string(fd.Name()))); d != "" {
			return d
		}
	}
	return ""
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// diffField compares one field's whole value: a list or map element by
// element, or a single value.
func diffField(fd protoreflect.FieldDescriptor, want, got protoreflect.Value, tol float64, path string) string {
	switch {
	case fd.IsList():
		a, b := want.List(), got.List()
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: want %d elements, got %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := diffSingular(fd, a.Get(i), b.Get(i), tol, fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case fd.IsMap():
		a, b := want.Map(), got.Map()
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: want %d entries, got %d", path, a.Len(), b.Len())
		}
		var diff string
		a.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			p := fmt.Sprintf("%s[%v]", path, k.Interface())
			if !b.Has(k) {
				diff = p + ": missing"
				return false
			}
			diff = diffSingular(fd.MapValue(), v, b.Get(k), tol, p)
			return diff == ""
		})
		return diff
	default:
		return diffSingular(fd, want, got, tol, path)
	}
	return ""
}

func diffSingular(fd protoreflect.FieldDescriptor, want, got protoreflect.Value, tol float64, path string) string {
	same := true
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return diffMessages(want.Message(), got.Message(), tol, path)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		same = floatsMatch(want.Float(), got.Float(), tol)
	case protoreflect.BytesKind:
		same = bytes.Equal(want.Bytes(), got.Bytes())
	default:
		same = want.Interface() == got.Interface()
	}
	if same {
		return ""
	}
	return fmt.Sprintf("%s: want %s, got %s", path, formatValue(fd, want), formatValue(fd, got))
}

// floatsMatch applies the tolerance rule of tensor outputs: within
// max(tol, tol·min(|a|,|b|)); NaN matches NaN, an infinity only itself.
func floatsMatch(a, b, tol float64) bool {
	if tol <= 0 {
		tol = validate.DefaultFloatTolerance
	}
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	d := math.Abs(a - b)
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return false
	}
	return d <= tol || d <= tol*math.Min(math.Abs(a), math.Abs(b))
}

// formatValue writes v as it would appear in JSON input.
func formatValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		b, err := protojson.Marshal(v.Message().Interface())
		if err != nil {
			return "(a message)"
		}
		return truncate(string(b), 120)
	case protoreflect.StringKind:
		return truncate(strconv.Quote(v.String()), 120)
	case protoreflect.BytesKind:
		return truncate(strconv.Quote(base64.StdEncoding.EncodeToString(v.Bytes())), 120)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.Itoa(int(v.Enum()))
	}
	return fmt.Sprint(v.Interface())
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

package client

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/perfscen/perfscen/internal/kservev2"
)

// The infer request header is written by hand: it is on the hot path and
// encoding/json's reflection costs several allocations per field.

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as a JSON string, escaping like encoding/json
// minus its optional HTML escaping.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendJSONValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return appendJSONString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case json.Number:
		if !json.Valid([]byte(x)) {
			return nil, fmt.Errorf("%q is not a JSON number", string(x))
		}
		return append(dst, x...), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v cannot be sent as JSON", x)
		}
		return strconv.AppendFloat(dst, x, 'g', -1, 64), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// appendParams writes a parameters object with sorted keys (stable bytes
// make request bodies comparable in tests and captures).
func appendParams(dst []byte, ps map[string]any, extra ...kv) ([]byte, error) {
	dst = append(dst, '{')
	n := 0
	for _, e := range extra {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendJSONString(dst, e.k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendJSONValue(dst, e.v); err != nil {
			return nil, fmt.Errorf("parameter %q: %w", e.k, err)
		}
	}
	if len(ps) > 0 {
		var keysBuf [8]string
		keys := keysBuf[:0]
		for k := range ps {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendJSONValue(dst, ps[k]); err != nil {
				return nil, fmt.Errorf("parameter %q: %w", k, err)
			}
		}
	}
	return append(dst, '}'), nil
}

type kv struct {
	k string
	v any
}

// shmParams lists the shared-memory parameters for a tensor.
func shmParams(dst []kv, s *ShmRef) []kv {
	return append(dst,
		kv{kservev2.ParamShmRegion, s.Region},
		kv{kservev2.ParamShmOffset, s.Offset},
		kv{kservev2.ParamShmByteSize, s.ByteSize},
	)
}

func appendShape(dst []byte, shape []int64) []byte {
	dst = append(dst, '[')
	for i, d := range shape {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, d, 10)
	}
	return append(dst, ']')
}

package inputdata

import (
	"bytes"
	"encoding/json"
	"strings"
)

func jsonValid(b []byte) bool { return json.Valid(b) }

func hasExtension(b []byte) bool {
	return bytes.Contains(b, []byte("NaN")) || bytes.Contains(b, []byte("Infinity"))
}

func isDupKey(err error) bool  { return strings.HasPrefix(err.Error(), "duplicate key") }
func isTooDeep(err error) bool { return strings.HasPrefix(err.Error(), "nesting deeper") }

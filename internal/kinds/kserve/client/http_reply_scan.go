package client

import (
	"encoding/json"
	"sync/atomic"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/tensor"
)

// scanReplyHeader decodes the usual shape of an infer reply header without
// reflection: id, model_name, model_version and outputs whose members are
// name, datatype, shape and parameters.binary_data_size. encoding/json costs
// about a tenth of the client's CPU on this path.
//
// It reports false for anything else — other keys, escapes or non-ASCII in
// strings, null, non-integer shapes, duplicate keys, invalid JSON — and the
// caller then decodes with encoding/json, which decides and words errors.
// When it reports true, r holds what json.Unmarshal would have produced
// (FuzzDecodeReplyHeader checks this). Strings equal to the request's model,
// version, id, output names or a known datatype reuse those strings instead
// of allocating.
func scanReplyHeader(data []byte, req *InferRequest, names *nameCache, r *reply) bool {
	s := replyScanner{b: data, names: names}
	if !s.lit('{') {
		return false
	}
	if !s.peek('}') && !s.fields(req, r) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

// fields reads the top-level members and the closing brace.
func (s *replyScanner) fields(req *InferRequest, r *reply) bool {
	var seen uint8
	for {
		key, ok := s.key()
		if !ok {
			return false
		}
		var bit uint8
		switch string(key) {
		case "id":
			bit = 1
			v, ok := s.str()
			if !ok {
				return false
			}
			r.ID = reuse(v, req, func(q *InferRequest) string { return q.ID })
		case "model_name":
			bit = 2
			v, ok := s.str()
			if !ok {
				return false
			}
			r.ModelName = reuse(v, req, func(q *InferRequest) string { return q.Model })
		case "model_version":
			bit = 4
			v, ok := s.str()
			if !ok {
				return false
			}
			r.ModelVersion = reuse(v, req, func(q *InferRequest) string { return q.Version })
		case "outputs":
			bit = 8
			if !s.outputs(req, r) {
				return false
			}
		case "parameters":
			bit = 16
			p, ok := s.params()
			if !ok {
				return false
			}
			r.Parameters = p
		default:
			return false
		}
		if seen&bit != 0 {
			return false // encoding/json keeps the last; rare, let it
		}
		seen |= bit
		if s.peek(',') {
			continue
		}
		return s.lit('}')
	}
}

func reuse(v []byte, req *InferRequest, field func(*InferRequest) string) string {
	if req != nil {
		if f := field(req); string(v) == f {
			return f
		}
	}
	return string(v)
}

type replyScanner struct {
	b     []byte
	i     int
	names *nameCache // may be nil
}

func (s *replyScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// lit consumes c after optional whitespace.
func (s *replyScanner) lit(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// peek is lit under another name where a miss is not an error.
func (s *replyScanner) peek(c byte) bool { return s.lit(c) }

// str reads a string of printable ASCII without escapes; its bytes need no
// decoding, so the returned slice aliases the input.
func (s *replyScanner) str() ([]byte, bool) {
	if !s.lit('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, true
		case c < 0x20 || c >= 0x80 || c == '\\':
			return nil, false
		}
		s.i++
	}
	return nil, false
}

func (s *replyScanner) key() ([]byte, bool) {
	k, ok := s.str()
	if !ok || !s.lit(':') {
		return nil, false
	}
	return k, true
}

// int reads a JSON integer that fits an int64 comfortably (at most 18
// digits); fractions and exponents, which encoding/json refuses for an
// int64, are left to it.
func (s *replyScanner) int() (int64, bool) {
	s.ws()
	neg := s.i < len(s.b) && s.b[s.i] == '-'
	if neg {
		s.i++
	}
	start := s.i
	var v int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		v = v*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	n := s.i - start
	if n == 0 || n > 18 || (n > 1 && s.b[start] == '0') {
		return 0, false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

// params reads a reply's parameters object when its values are strings
// (as str reads them), numbers and booleans, into what
// kservev2.Parameters' decoder makes of it: numbers as json.Number of
// their text, a later duplicate key replacing an earlier one. Triton's
// identity backend sends such an object with every reply, and handing
// those replies to encoding/json cost about 7% of the client's CPU at
// concurrency 1.
func (s *replyScanner) params() (kservev2.Parameters, bool) {
	if !s.lit('{') {
		return nil, false
	}
	p := kservev2.Parameters{}
	if s.peek('}') {
		return p, true
	}
	for {
		k, ok := s.key()
		if !ok {
			return nil, false
		}
		v, ok := s.paramValue()
		if !ok {
			return nil, false
		}
		p[string(k)] = v
		if s.peek(',') {
			continue
		}
		if !s.lit('}') {
			return nil, false
		}
		return p, true
	}
}

// paramValue reads a string, number or boolean; anything else (null,
// objects, arrays) is left to encoding/json.
func (s *replyScanner) paramValue() (any, bool) {
	s.ws()
	if s.i >= len(s.b) {
		return nil, false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		v, ok := s.str()
		return string(v), ok
	case c == 't':
		return true, s.word("true")
	case c == 'f':
		return false, s.word("false")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return nil, false
}

// word consumes w.
func (s *replyScanner) word(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

// number reads a JSON number, by its grammar, as json.Number.
func (s *replyScanner) number() (json.Number, bool) {
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return "", false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return "", false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return "", false
		}
	}
	return json.Number(s.b[start:s.i]), true
}

func (s *replyScanner) outputs(req *InferRequest, r *reply) bool {
	if !s.lit('[') {
		return false
	}
	r.Outputs = make([]replyOutput, 0, 2)
	if s.peek(']') {
		return true
	}
	for {
		r.Outputs = append(r.Outputs, replyOutput{})
		if !s.output(req, &r.Outputs[len(r.Outputs)-1]) {
			return false
		}
		if s.peek(',') {
			continue
		}
		for i := range r.Outputs {
			if o := &r.Outputs[i]; o.Parameters.BinaryDataSize != nil {
				o.Parameters.BinaryDataSize = &o.binSize
			}
		}
		return s.lit(']')
	}
}

func (s *replyScanner) output(req *InferRequest, o *replyOutput) bool {
	if !s.lit('{') {
		return false
	}
	if s.peek('}') {
		return true
	}
	var seen uint8
	for {
		key, ok := s.key()
		if !ok {
			return false
		}
		var bit uint8
		switch string(key) {
		case "name":
			bit = 1
			v, ok := s.str()
			if !ok {
				return false
			}
			o.Name = s.outputName(v, req)
		case "datatype":
			bit = 2
			v, ok := s.str()
			if !ok {
				return false
			}
			o.DataType = dataType(v)
		case "shape":
			bit = 4
			if o.Shape, ok = s.shape(); !ok {
				return false
			}
		case "parameters":
			bit = 8
			if !s.outputParams(o) {
				return false
			}
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if s.peek(',') {
			continue
		}
		return s.lit('}')
	}
}

func (s *replyScanner) shape() ([]int64, bool) {
	if !s.lit('[') {
		return nil, false
	}
	var buf [8]int64
	dims := buf[:0]
	if !s.peek(']') {
		for {
			d, ok := s.int()
			if !ok {
				return nil, false
			}
			dims = append(dims, d)
			if s.peek(',') {
				continue
			}
			if !s.lit(']') {
				return nil, false
			}
			break
		}
	}
	// One exact allocation; encoding/json also yields a non-nil empty slice.
	return append(make([]int64, 0, len(dims)), dims...), true
}

func (s *replyScanner) outputParams(o *replyOutput) bool {
	if !s.lit('{') {
		return false
	}
	if s.peek('}') {
		return true
	}
	key, ok := s.key()
	if !ok || string(key) != kservev2.ParamBinaryDataSize {
		return false
	}
	v, ok := s.int()
	if !ok {
		return false
	}
	// The field points into the output itself (no allocation); outputs
	// re-aims it once the slice stops growing.
	o.binSize = v
	o.Parameters.BinaryDataSize = &o.binSize
	return s.lit('}')
}

func (s *replyScanner) outputName(v []byte, req *InferRequest) string {
	if req != nil {
		for i := range req.Outputs {
			if string(v) == req.Outputs[i].Name {
				return req.Outputs[i].Name
			}
		}
	}
	return s.names.intern(v)
}

// nameCache remembers a few output names so that replies naming the same
// outputs request after request (the usual case: a scenario asks for all
// outputs without naming them) do not allocate them every time.
type nameCache struct {
	names atomic.Pointer[[]string] // copy-on-write
}

const maxCachedNames = 32

func (c *nameCache) intern(v []byte) string {
	if c == nil {
		return string(v)
	}
	var old []string
	p := c.names.Load()
	if p != nil {
		old = *p
		for _, n := range old {
			if string(v) == n {
				return n
			}
		}
	}
	n := string(v)
	if len(old) < maxCachedNames {
		next := append(old[:len(old):len(old)], n)
		c.names.CompareAndSwap(p, &next) // a lost race only skips caching
	}
	return n
}

func dataType(v []byte) tensor.DataType {
	for _, dt := range tensor.DataTypes {
		if string(v) == string(dt) {
			return dt
		}
	}
	return tensor.DataType(v)
}

package refserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/tensor"
)

func (s *Server) httpInfer(w http.ResponseWriter, r *http.Request, model, version string) {
	// Triton's front-end looks the model up before reading the request
	// and answers those failures under text/plain.
	if m, err := s.resolve(model, version); err != nil {
		writePlainError(w, err)
		return
	} else if m.def.decoupled {
		writePlainError(w, errDecoupled("HTTP end point"))
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	received := time.Now()
	req, binaryDefault, err := s.parseHTTPInfer(r.Header, body, model, version)
	if err != nil {
		writeError(w, err)
		return
	}
	req.received = received
	req.endpoint = "HTTP end point"
	out, err := s.infer(r.Context(), req)
	if errors.Is(err, errDropped) {
		dropConnection(w)
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	t := time.Now()
	resp, headerLen, err := encodeHTTPInfer(req.id, model, out, binaryDefault, s.plain())
	encode := time.Since(t)
	out.finish(encode, err)
	if err != nil {
		writeError(w, err)
		return
	}
	h := w.Header()
	if headerLen < len(resp) {
		h.Set("Content-Type", "application/octet-stream")
		h.Set(kservev2.HeaderContentLength, strconv.Itoa(headerLen))
	} else {
		h.Set("Content-Type", "application/json")
	}
	if enc := responseEncoding(r.Header.Get("Accept-Encoding")); enc != "" {
		resp = compress(enc, resp)
		h.Set("Content-Encoding", enc)
	}
	h.Set("Content-Length", strconv.Itoa(len(resp)))
	w.WriteHeader(http.StatusOK)
	w.Write(resp)
}

// dropConnection closes the client's connection without an answer.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// parseHTTPInfer turns an infer body into an inferRequest. binaryDefault
// is the binary_data_output request parameter.
func (s *Server) parseHTTPInfer(h http.Header, body []byte, model, version string) (*inferRequest, bool, error) {
	hl := h.Get(kservev2.HeaderContentLength)
	if hl != "" {
		n, err := kservev2.ParseHeaderLength(hl, len(body))
		if err != nil {
			return nil, false, errorf(codeInvalidArg, "%v", err)
		}
		if n == 0 {
			req, err := s.rawBinaryRequest(body, model, version)
			return req, true, err
		}
	}
	header, rest := body, []byte(nil)
	if hl != "" {
		n, _ := kservev2.ParseHeaderLength(hl, len(body))
		header, rest, _ = kservev2.SplitBinaryBody(body, n)
	}
	var kr kservev2.InferRequest
	if err := json.Unmarshal(header, &kr); err != nil {
		return nil, false, errorf(codeInvalidArg, "failed to parse the request JSON buffer: %v", err)
	}
	req := &inferRequest{model: model, version: version, id: kr.ID}
	binaryDefault, err := parseRequestParams(kr.Parameters, &req.seq, &req.timeout)
	if err != nil {
		return nil, false, err
	}
	if hl == "" {
		for _, in := range kr.Inputs {
			if _, ok := in.Parameters[kservev2.ParamBinaryDataSize]; ok {
				return nil, false, errorf(codeInvalidArg, "must specify valid 'Infer-Header-Content-Length' in request header and 'binary_data_size' when passing inputs in binary data format")
			}
		}
	}
	bins, err := kservev2.SliceInputs(kr.Inputs, rest)
	if err != nil {
		return nil, false, errorf(codeInvalidArg, "%v", err)
	}
	for i, in := range kr.Inputs {
		ii, err := httpInput(in, bins[i], s.plain())
		if err != nil {
			return nil, false, err
		}
		req.inputs = append(req.inputs, ii)
	}
	if kr.Outputs != nil {
		req.outputs = []outputRequest{}
	}
	for _, o := range kr.Outputs {
		or := outputRequest{name: o.Name, binary: binaryDefault}
		if b, ok, err := o.Parameters.Bool(kservev2.ParamBinaryData); err != nil {
			return nil, false, errorf(codeInvalidArg, "output '%s': %v", o.Name, err)
		} else if ok {
			or.binary = b
		}
		ref, err := shmParams(o.Parameters, "output", o.Name)
		if err != nil {
			return nil, false, err
		}
		if ref != nil && or.binary && o.Parameters[kservev2.ParamBinaryData] == true {
			return nil, false, errorf(codeInvalidArg, "Output can't set both 'shared_memory_region' and 'binary_data'")
		}
		if ref != nil {
			or.binary = false
		}
		or.shm = ref
		if or.classCount, err = classParam(o.Parameters, o.Name); err != nil {
			return nil, false, err
		}
		req.outputs = append(req.outputs, or)
	}
	return req, binaryDefault, nil
}

// httpInput builds one input from its JSON form and binary bytes.
// halfJSON accepts FP16 and BF16 as JSON numbers, which plain KServe v2
// servers do and Triton does not.
func httpInput(in kservev2.InferInput, bin []byte, halfJSON bool) (inferInput, error) {
	dt, err := tensor.ParseDataType(string(in.DataType))
	if err != nil {
		return inferInput{}, errorf(codeInvalidArg, "input '%s': %v", in.Name, err)
	}
	ii := inferInput{name: in.Name, dtype: dt, shape: in.Shape}
	hasData := len(in.Data) > 0 && string(in.Data) != "null"
	_, hasBin := in.Parameters[kservev2.ParamBinaryDataSize]
	ref, err := shmParams(in.Parameters, "input", in.Name)
	if err != nil {
		return ii, err
	}
	n := 0
	for _, b := range []bool{hasData, hasBin, ref != nil} {
		if b {
			n++
		}
	}
	if n != 1 {
		return ii, errorf(codeInvalidArg, "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But input '%s' set %d of them", in.Name, n)
	}
	switch {
	case hasBin:
		ii.raw, ii.hasRaw = bin, true
	case ref != nil:
		ii.shm = ref
	default:
		if !tensor.JSONAllowed(dt) && !halfJSON {
			return ii, errorf(codeInvalidArg, "sending %s data via JSON is not supported. Please use the binary data format for input '%s'", dt, in.Name)
		}
		data := in.Data
		ii.decode = func(dt tensor.DataType, shape []int64) ([]byte, error) {
			t, err := tensor.FromJSONData(in.Name, dt, shape, data)
			return t.Raw, err
		}
	}
	return ii, nil
}

// shmParams reads a tensor's shared_memory_* parameters; nil when absent.
func shmParams(p kservev2.Parameters, kind, name string) (*shmRef, error) {
	region, hasRegion, err := p.String(kservev2.ParamShmRegion)
	if err != nil {
		return nil, errorf(codeInvalidArg, "%s '%s': %v", kind, name, err)
	}
	size, hasSize, err := p.Int64(kservev2.ParamShmByteSize)
	if err != nil {
		return nil, errorf(codeInvalidArg, "%s '%s': %v", kind, name, err)
	}
	off, _, err := p.Int64(kservev2.ParamShmOffset)
	if err != nil {
		return nil, errorf(codeInvalidArg, "%s '%s': %v", kind, name, err)
	}
	return makeShmRef(kind, name, region, hasRegion, size, hasSize, off)
}

func makeShmRef(kind, name, region string, hasRegion bool, size int64, hasSize bool, off int64) (*shmRef, error) {
	if !hasRegion && !hasSize {
		return nil, nil
	}
	if !hasRegion || !hasSize {
		return nil, errorf(codeInvalidArg, "%s '%s': 'shared_memory_region' and 'shared_memory_byte_size' must be given together", kind, name)
	}
	if size < 0 || off < 0 {
		return nil, errorf(codeInvalidArg, "%s '%s': shared memory offset %d and byte size %d must not be negative", kind, name, off, size)
	}
	return &shmRef{region: region, offset: off, size: size}, nil
}

// parseRequestParams reads the reserved request parameters (sequence,
// schedule policy, binary_data_output) and rejects triton_* keys.
func parseRequestParams(p kservev2.Parameters, seq *sequenceParams, timeout *time.Duration) (binaryDefault bool, err error) {
	for k := range p {
		if strings.HasPrefix(k, "triton_") {
			return false, errorf(codeInvalidArg, "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.")
		}
	}
	switch v := p[kservev2.ParamSequenceID].(type) {
	case nil:
	case string:
		seq.id = v
	default:
		id, err := kservev2.AnyToInt64(v)
		if err != nil || id < 0 {
			return false, errorf(codeInvalidArg, "parameter 'sequence_id' must be a non-negative integer or a string, got %v", v)
		}
		seq.id = strconv.FormatInt(id, 10)
	}
	if seq.start, _, err = p.Bool(kservev2.ParamSequenceStart); err != nil {
		return false, errorf(codeInvalidArg, "%v", err)
	}
	if seq.end, _, err = p.Bool(kservev2.ParamSequenceEnd); err != nil {
		return false, errorf(codeInvalidArg, "%v", err)
	}
	for _, k := range []string{kservev2.ParamPriority, kservev2.ParamTimeout} {
		v, ok, err := p.Int64(k)
		if err != nil || (ok && v < 0) {
			return false, errorf(codeInvalidArg, "parameter '%s' must be a non-negative integer", k)
		}
		if k == kservev2.ParamTimeout {
			*timeout = time.Duration(v) * time.Microsecond
		}
	}
	if binaryDefault, _, err = p.Bool(kservev2.ParamBinaryDataOutput); err != nil {
		return false, errorf(codeInvalidArg, "%v", err)
	}
	return binaryDefault, nil
}

// rawBinaryRequest handles Inference-Header-Content-Length: 0, where the
// body is the raw bytes of the model's single input, batch 1.
func (s *Server) rawBinaryRequest(body []byte, model, version string) (*inferRequest, error) {
	m, err := s.resolve(model, version)
	if err != nil {
		return nil, err
	}
	def := m.def
	if len(def.inputs) != 1 {
		return nil, errorf(codeInvalidArg, "raw binary request requires a model with exactly 1 input, model '%s' has %d", def.name, len(def.inputs))
	}
	spec := def.inputs[0]
	shape, err := rawShape(spec, len(body))
	if err != nil {
		return nil, errorf(codeInvalidArg, "raw binary request for model '%s': %v", def.name, err)
	}
	if def.maxBatchSize > 0 {
		shape = append([]int64{1}, shape...)
	}
	return &inferRequest{model: model, version: version,
		inputs: []inferInput{{name: spec.name, dtype: spec.dtype, shape: shape, raw: body, hasRaw: true}}}, nil
}

// rawShape infers the input shape from the body size: at most one variable
// dim for fixed-size types, shape [1] for BYTES.
func rawShape(spec tensorSpec, n int) ([]int64, error) {
	if spec.dtype == tensor.BYTES {
		return []int64{1}, nil
	}
	fixed, variable := int64(spec.dtype.Size()), -1
	for i, d := range spec.dims {
		if d < 0 {
			if variable >= 0 {
				return nil, errors.New("input has more than one variable dimension")
			}
			variable = i
			continue
		}
		fixed *= d
	}
	shape := append([]int64(nil), spec.dims...)
	if variable >= 0 {
		if fixed == 0 || int64(n)%fixed != 0 {
			return nil, errors.New("body size is not a multiple of the element size")
		}
		shape[variable] = int64(n) / fixed
	}
	return shape, nil
}

// encodeHTTPInfer renders the response JSON and any binary outputs after
// it; headerLen is the JSON length. halfJSON writes FP16 and BF16 as JSON
// numbers (plain KServe v2) instead of refusing them (Triton).
func encodeHTTPInfer(id, model string, out *inferOutcome, binaryDefault, halfJSON bool) ([]byte, int, error) {
	resp := kservev2.InferResponse{ID: id, ModelName: model, ModelVersion: out.version, Outputs: make([]kservev2.InferOutput, 0, len(out.outputs))}
	var bins [][]byte
	for _, o := range out.outputs {
		ko := kservev2.InferOutput{Name: o.name, DataType: o.dtype, Shape: o.shape}
		switch {
		case o.req.shm != nil:
			// Written to shared memory: the entry carries no data.
		case o.req.binary || (o.req.implicit && binaryDefault):
			ko.Parameters = kservev2.Parameters{kservev2.ParamBinaryDataSize: len(o.raw)}
			bins = append(bins, o.raw)
		default:
			if !tensor.JSONAllowed(o.dtype) && !halfJSON {
				return nil, 0, errorf(codeInvalidArg, "sending %s data via JSON is not supported. Please use the binary data format for output", o.dtype)
			}
			data, err := tensor.MarshalJSONData(tensor.Tensor{Name: o.name, DataType: o.dtype, Shape: o.shape, Raw: o.raw})
			if err != nil {
				return nil, 0, errorf(codeInternal, "encoding output '%s': %v", o.name, err)
			}
			ko.Data = data
		}
		resp.Outputs = append(resp.Outputs, ko)
	}
	header, err := json.Marshal(resp)
	if err != nil {
		return nil, 0, errorf(codeInternal, "encoding response: %v", err)
	}
	return kservev2.EncodeBinaryBody(header, bins...), len(header), nil
}

package torchserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
)

// maxBody bounds a prediction's request body.
const maxBody = 64 << 20

// writeError answers TorchServe's error body.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.MarshalIndent(tsError{Code: status, Type: typ, Message: msg}, "", "  ")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func notFound(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, "ResourceNotFoundException", "Requested resource is not found, please refer to API document.")
}

func methodNotAllowed(w http.ResponseWriter) {
	writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowedException", "Requested method is not allowed, please refer to API document.")
}

// inference serves GET /ping, OPTIONS / and POST /predictions/{model}[/{version}].
func (f *frontend) inference(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/ping":
		if r.Method != http.MethodGet {
			methodNotAllowed(w)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{\n  \"status\": \"Healthy\"\n}\n")
	case r.URL.Path == "/" && r.Method == http.MethodOptions:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"openapi": "3.0.1", "info": {"title": "TorchServe APIs (perfscen embedded flavour)", "version": "embedded"}, "paths": {}}`+"\n")
	case strings.HasPrefix(r.URL.Path, "/predictions/"):
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/predictions/"), "/")
		if len(parts) > 2 || parts[0] == "" {
			notFound(w)
			return
		}
		if r.Method != http.MethodPost && r.Method != http.MethodPut {
			methodNotAllowed(w)
			return
		}
		version := ""
		if len(parts) == 2 {
			version = parts[1]
		}
		f.predict(w, r, parts[0], version)
	default:
		notFound(w)
	}
}

// served is the model name as the flavour serves it: built-in models that
// need sequence ids or answer on streams have no place in TorchServe's
// request/reply API.
func (f *frontend) served(name string) (refserver.ModelInfo, bool) {
	info, ok := f.core.Model(name)
	if !ok || info.Sequence || info.Decoupled {
		return refserver.ModelInfo{}, false
	}
	return info, true
}

// predict runs one prediction. Statuses follow TorchServe: an unknown
// model or version is 404, anything the handler fails on (here: a body
// that does not map onto the model's inputs, or the model failing) is 503.
func (f *frontend) predict(w http.ResponseWriter, r *http.Request, model, version string) {
	start := time.Now()
	status := f.predictStatus(w, r, model, version, start)
	f.stats.status(status)
}

func (f *frontend) predictStatus(w http.ResponseWriter, r *http.Request, model, version string, start time.Time) int {
	info, ok := f.served(model)
	if !ok {
		writeError(w, http.StatusNotFound, "ModelNotFoundException", "Model not found: "+model)
		return http.StatusNotFound
	}
	if version != "" && version != info.Version {
		writeError(w, http.StatusNotFound, "ModelVersionNotFoundException", fmt.Sprintf("Model version: %s does not exist for model: %s", version, model))
		return http.StatusNotFound
	}
	body, err := requestData(r)
	if err == nil {
		var ins []tensor.Tensor
		if ins, err = decodeInputs(info, body); err == nil {
			var resp *refserver.Response
			resp, err = f.core.Infer(r.Context(), &refserver.Request{Model: model, Inputs: ins})
			if err == nil {
				out, err := encodeOutputs(resp.Outputs)
				if err != nil {
					writeError(w, http.StatusServiceUnavailable, "InternalServerException", "Prediction failed: "+err.Error())
					return http.StatusServiceUnavailable
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(out)
				label := version
				if label == "" {
					label = defaultVersionLabel
				}
				f.stats.prediction(model, label, time.Since(start), resp.Queue)
				return http.StatusOK
			}
		}
	}
	if refserver.Dropped(err) {
		// Fault injection: the connection goes without an answer.
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, herr := hj.Hijack(); herr == nil {
				c.Close()
				return 0
			}
		}
	}
	switch refserver.CodeOf(err) {
	case refserver.NotFound:
		writeError(w, http.StatusNotFound, "ModelNotFoundException", "Model not found: "+model)
		return http.StatusNotFound
	case refserver.Unavailable:
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableException", err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, "InternalServerException", "Prediction failed: "+err.Error())
	}
	return http.StatusServiceUnavailable
}

// requestData is what a TorchServe handler receives as the request's
// "data" (or "body"): the whole body, or the form part of that name. A
// form-urlencoded body is what a client sends without a Content-Type
// (curl --data-binary): TorchServe decodes it as a form, the content is
// lost and the handler fails; so does this flavour.
func requestData(r *http.Request) ([]byte, error) {
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/x-www-form-urlencoded":
		return nil, errors.New("the body came as a URL-encoded form (no Content-Type given?); TorchServe decodes such bodies as form fields and the handler finds no data: send a Content-Type such as application/json")
	case "multipart/form-data":
		mr := multipart.NewReader(io.LimitReader(r.Body, maxBody), params["boundary"])
		var fallback []byte
		found := false
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("reading the multipart body: %w", err)
			}
			b, err := io.ReadAll(p)
			if err != nil {
				return nil, fmt.Errorf("reading form part %q: %w", p.FormName(), err)
			}
			switch p.FormName() {
			case "data":
				return b, nil
			case "body":
				fallback, found = b, true
			}
		}
		if found {
			return fallback, nil
		}
		return nil, errors.New(`the form has no part "data" or "body"`)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	return b, nil
}

// decodeInputs maps a JSON body onto the model's inputs: an object keyed
// by input name, each a flat (or nested, read row-major) array of values;
// or, for a model with one input, a bare array or {"data": array} as
// TorchServe's handlers take it. {"data": {...}} holds the keyed form.
// One request is one sample: a batching model gets batch 1, and a
// variable dim takes what the element count leaves.
func decodeInputs(info refserver.ModelInfo, body []byte) ([]tensor.Tensor, error) {
	byName, err := inputValues(info, body, true)
	if err != nil {
		return nil, err
	}
	out := make([]tensor.Tensor, 0, len(info.Inputs))
	for _, in := range info.Inputs {
		v, ok := byName[in.Name]
		if !ok {
			return nil, fmt.Errorf("input %s is missing (model %s takes %s)", in.Name, info.Name, inputNames(info))
		}
		n, err := countElements(v)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", in.Name, err)
		}
		shape, err := shapeFor(in.Dims, n)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", in.Name, err)
		}
		if info.MaxBatchSize > 0 {
			shape = append([]int64{1}, shape...)
		}
		t, err := tensor.FromJSONData(in.Name, in.DataType, shape, v)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func inputValues(info refserver.ModelInfo, body []byte, top bool) (map[string]json.RawMessage, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, errors.New("no input found in the request")
	}
	switch body[0] {
	case '[':
		if len(info.Inputs) != 1 {
			return nil, fmt.Errorf("a bare array feeds a model with one input; model %s takes %s: send an object keyed by input name", info.Name, inputNames(info))
		}
		return map[string]json.RawMessage{info.Inputs[0].Name: body}, nil
	case '{':
	default:
		return nil, errors.New("the body is not a JSON array or object")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("the body is not JSON: %w", err)
	}
	known := true
	for k := range obj {
		if !slices.ContainsFunc(info.Inputs, func(t refserver.TensorInfo) bool { return t.Name == k }) {
			known = false
		}
	}
	if known && len(obj) > 0 {
		return obj, nil
	}
	if d, ok := obj["data"]; ok && top && len(obj) == 1 {
		return inputValues(info, d, false)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return nil, fmt.Errorf("keys %v are not inputs of model %s (it takes %s; or {\"data\": [...]} for a model with one input)", keys, info.Name, inputNames(info))
}

func inputNames(info refserver.ModelInfo) string {
	var n []string
	for _, t := range info.Inputs {
		n = append(n, t.Name)
	}
	return strings.Join(n, ", ")
}

// countElements counts the leaves of a (nested) JSON array.
func countElements(v json.RawMessage) (int64, error) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var tree any
	if err := d.Decode(&tree); err != nil {
		return 0, err
	}
	if _, ok := tree.([]any); !ok {
		return 0, errors.New("want an array of values")
	}
	var count func(any) int64
	count = func(x any) int64 {
		l, ok := x.([]any)
		if !ok {
			return 1
		}
		var n int64
		for _, e := range l {
			n += count(e)
		}
		return n
	}
	return count(tree), nil
}

// shapeFor resolves the model dims for n elements: one variable dim takes
// what the fixed ones leave.
func shapeFor(dims []int64, n int64) ([]int64, error) {
	shape := slices.Clone(dims)
	fixed, free := int64(1), -1
	for i, d := range dims {
		if d < 0 {
			if free >= 0 {
				return nil, fmt.Errorf("the model's dims %v have more than one variable dim; this flavour cannot tell the shape of %d values", dims, n)
			}
			free = i
			continue
		}
		fixed *= d
	}
	switch {
	case free < 0 && fixed != n:
		return nil, fmt.Errorf("%d values for dims %v, which hold %d", n, dims, fixed)
	case free >= 0 && (fixed == 0 || n%fixed != 0):
		return nil, fmt.Errorf("%d values do not fill dims %v", n, dims)
	case free >= 0:
		shape[free] = n / fixed
	}
	return shape, nil
}

// encodeOutputs writes the outputs as a JSON object keyed by output name,
// each a flat array, in the model's order.
func encodeOutputs(outs []tensor.Tensor) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, o := range outs {
		if i > 0 {
			b.WriteString(", ")
		}
		v, err := tensor.MarshalJSONData(o)
		if err != nil {
			return nil, err
		}
		name, _ := json.Marshal(o.Name)
		b.Write(name)
		b.WriteString(": ")
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

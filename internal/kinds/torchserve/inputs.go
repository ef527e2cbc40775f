package torchserve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfscen/perfscen/internal/jsonpos"
)

// request is one prepared prediction: the exact body sent, its
// Content-Type, and what the reply must be when outputs are validated.
type request struct {
	body        []byte
	contentType string
	origin      string // "data.json step 3", for reports
	expect      *expectation
}

// expectation is a reply to compare with: JSON (compared as values) or
// bytes (compared exactly).
type expectation struct {
	json bool
	raw  []byte
}

// Content types of bodies given without one.
const (
	ctJSON   = "application/json"
	ctText   = "text/plain; charset=utf-8"
	ctBinary = "application/octet-stream"
)

// perfAnalyzerInput is perf_analyzer's one TorchServe input: a file path
// whose content goes as the multipart part "data".
const perfAnalyzerInput = "TORCHSERVE_INPUT"

// bodyKeys are the keys that give a step's body; a step has exactly one.
var bodyKeys = []string{perfAnalyzerInput, "json", "text", "b64", "file"}

// loadFile reads one input-data file:
//
//	{"data": [{"json": {...}} | {"text": "..."} | {"b64": "..."} | {"file": "path"}
//	          | {"TORCHSERVE_INPUT": ["path"]}, ...],
//	 "validation_data": [{"json": ...} | {"text": ...} | {"b64": ...} | {"file": ...} | {}, ...]}
//
// A step may add "content_type" (the request's, or its part's with
// "part") and "part" (send the body as that multipart form part).
// Relative paths are relative to the file. Errors name file:line and the
// entry's JSON path.
func loadFile(path string) ([]request, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", where(path, raw, err), err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: trailing content after the JSON document", path)
	}
	for k := range doc {
		if k != "data" && k != "validation_data" {
			return nil, fmt.Errorf("%s: unknown key %q (an input-data file holds \"data\" and optionally \"validation_data\")", at(path, raw, k), k)
		}
	}
	var steps []json.RawMessage
	if err := json.Unmarshal(doc["data"], &steps); err != nil || len(steps) == 0 {
		return nil, fmt.Errorf("%s: \"data\" must be a non-empty list of requests, e.g. [{\"json\": {...}}]", at(path, raw, "data"))
	}
	var checks []json.RawMessage
	if v, ok := doc["validation_data"]; ok {
		if err := json.Unmarshal(v, &checks); err != nil {
			return nil, fmt.Errorf("%s: \"validation_data\" must be a list, one entry per request of \"data\"", at(path, raw, "validation_data"))
		}
		if len(checks) != len(steps) {
			return nil, fmt.Errorf("%s: \"validation_data\" has %d entries, \"data\" %d; give one per request ({} for none)", at(path, raw, "validation_data"), len(checks), len(steps))
		}
	}
	dir := filepath.Dir(path)
	out := make([]request, len(steps))
	for i, s := range steps {
		r, err := readStep(dir, s)
		if err != nil {
			return nil, fmt.Errorf("%s: data[%d]: %w", at(path, raw, "data", i), i, err)
		}
		r.origin = fmt.Sprintf("%s step %d", filepath.Base(path), i)
		if checks != nil {
			if r.expect, err = readExpectation(dir, checks[i]); err != nil {
				return nil, fmt.Errorf("%s: validation_data[%d]: %w", at(path, raw, "validation_data", i), i, err)
			}
		}
		out[i] = r
	}
	return out, nil
}

// readStep builds one request from a step object.
func readStep(dir string, raw json.RawMessage) (request, error) {
	var step map[string]json.RawMessage
	if err := json.Unmarshal(raw, &step); err != nil || step == nil {
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
			return request{}, errors.New("a list of requests here is perf_analyzer's streams form (sequence data), which TorchServe has no use for; give one object per request")
		}
		return request{}, fmt.Errorf("want an object with one of %s", strings.Join(bodyKeys, ", "))
	}
	var kind string
	for k := range step {
		switch {
		case slices.Contains(bodyKeys, k):
			if kind != "" {
				return request{}, fmt.Errorf("give one body, not both %q and %q", min(kind, k), max(kind, k))
			}
			kind = k
		case k == "content_type", k == "part":
		default:
			return request{}, fmt.Errorf("unknown key %q (a request holds one of %s, and optionally content_type and part)", k, strings.Join(bodyKeys, ", "))
		}
	}
	if kind == "" {
		return request{}, fmt.Errorf("no body: give one of %s", strings.Join(bodyKeys, ", "))
	}
	var ct, part string
	if v, ok := step["content_type"]; ok {
		if err := json.Unmarshal(v, &ct); err != nil || strings.TrimSpace(ct) == "" {
			return request{}, errors.New("content_type must be a non-empty string, e.g. \"application/json\"")
		}
	}
	if v, ok := step["part"]; ok {
		if err := json.Unmarshal(v, &part); err != nil || part == "" {
			return request{}, errors.New("part must be a non-empty form field name, e.g. \"data\"")
		}
	}
	body, defaultCT, err := readBody(dir, kind, step[kind])
	if err != nil {
		return request{}, err
	}
	if kind == perfAnalyzerInput {
		// perf_analyzer sends the file as the form part "data", with no
		// Content-Type of its own.
		if part == "" {
			part = "data"
		}
	}
	if part != "" {
		b, formCT := multipartBody(part, ct, body)
		return request{body: b, contentType: formCT}, nil
	}
	if ct == "" {
		ct = defaultCT
	}
	return request{body: body, contentType: ct}, nil
}

// readBody decodes one body value of kind and says the Content-Type it
// goes with when the step gives none.
func readBody(dir, kind string, v json.RawMessage) ([]byte, string, error) {
	switch kind {
	case "json":
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err != nil {
			return nil, "", fmt.Errorf("json: %w", err)
		}
		return buf.Bytes(), ctJSON, nil
	case "text":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, "", errors.New("text must be a string")
		}
		return []byte(s), ctText, nil
	case "b64":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, "", errors.New("b64 must be a base64 string")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, "", fmt.Errorf("b64: %w", err)
		}
		return b, ctBinary, nil
	case "file":
		var p string
		if err := json.Unmarshal(v, &p); err != nil || p == "" {
			return nil, "", errors.New("file must be a path")
		}
		return readPath(dir, p)
	}
	// perf_analyzer's TORCHSERVE_INPUT: a list holding one path (its BYTES
	// tensor of shape [1]); a bare string is taken too.
	var paths []string
	if err := json.Unmarshal(v, &paths); err != nil {
		var p string
		if json.Unmarshal(v, &p) != nil {
			return nil, "", fmt.Errorf("%s must be a list holding one file path, e.g. [\"kitten.jpg\"]", perfAnalyzerInput)
		}
		paths = []string{p}
	}
	if len(paths) != 1 || paths[0] == "" {
		return nil, "", fmt.Errorf("%s must hold exactly one file path (perf_analyzer sends one file per request), found %d", perfAnalyzerInput, len(paths))
	}
	b, _, err := readPath(dir, paths[0])
	return b, "", err
}

// readPath reads a body file; relative paths are relative to dir.
func readPath(dir, p string) ([]byte, string, error) {
	full := p
	if !filepath.IsAbs(p) {
		full = filepath.Join(dir, p)
	}
	b, err := os.ReadFile(full)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, "", fmt.Errorf("file %s: %w", full, err)
	}
	return b, contentTypeOf(full), nil
}

// contentTypeOf guesses a body file's type from its extension: JSON and
// text are named, the rest is binary.
func contentTypeOf(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return ctJSON
	case ".txt":
		return ctText
	}
	return ctBinary
}

// readExpectation reads one validation_data entry; {} checks nothing.
func readExpectation(dir string, raw json.RawMessage) (*expectation, error) {
	var e map[string]json.RawMessage
	if err := json.Unmarshal(raw, &e); err != nil || e == nil {
		return nil, errors.New("want an object with one of json, text, b64, file (or {} to check nothing)")
	}
	if len(e) == 0 {
		return nil, nil
	}
	if len(e) > 1 {
		return nil, errors.New("give one expected reply: one of json, text, b64, file")
	}
	for k, v := range e {
		switch k {
		case "json":
			var buf bytes.Buffer
			if err := json.Compact(&buf, v); err != nil {
				return nil, fmt.Errorf("json: %w", err)
			}
			return &expectation{json: true, raw: buf.Bytes()}, nil
		case "text", "b64", "file":
			b, _, err := readBody(dir, k, v)
			if err != nil {
				return nil, err
			}
			return &expectation{raw: b}, nil
		}
		return nil, fmt.Errorf("unknown key %q (an expected reply is one of json, text, b64, file)", k)
	}
	return nil, nil
}

// loadDir makes one request of every regular file in dir, in name order:
// its bytes are the body, its extension decides the Content-Type.
func loadDir(dir string) ([]request, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []request
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, ct, err := readPath(dir, e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, request{body: b, contentType: ct, origin: e.Name()})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no files; a directory of request bodies holds one file per request", dir)
	}
	return out, nil
}

// where turns a decoding error's offset into file:line.
func where(path string, raw []byte, err error) string {
	line, _, ok := jsonpos.Of(raw, err)
	if !ok {
		return path
	}
	return fmt.Sprintf("%s:%d", path, line)
}

// at names the line of the value at a JSON path as file:line.
func at(path string, raw []byte, steps ...any) string {
	line, _, ok := jsonpos.Find(raw, steps...)
	if !ok {
		return path
	}
	return fmt.Sprintf("%s:%d", path, line)
}

package inputdata

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfscen/perfscen/internal/tensor"
)

// readDir reads perf_analyzer's directory form: one file per input named
// after it, holding one batch-1 sample (raw little-endian bytes; for BYTES,
// one element per line), plus optional files named after outputs holding
// the expected values.
func readDir(spec ModelSpec, src Source) (*sampleSet, error) {
	dir := src.Paths[0]
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{File: dir, Stream: -1, Step: -1, Msg: "cannot read input data directory", Err: err}
	}
	present := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue // .gitkeep and editor files are not tensors
		}
		if _, ok := spec.tensor(name); !ok || e.IsDir() {
			return nil, &Error{File: filepath.Join(dir, name), Stream: -1, Step: -1, Tensor: name,
				Msg: fmt.Sprintf("file does not name a model input or output (inputs %s, outputs %s)", names(spec.Inputs), names(spec.Outputs))}
		}
		present[name] = true
	}
	in := map[string]sample{}
	for _, ts := range spec.Inputs {
		if !present[ts.Name] {
			if ts.Optional {
				continue
			}
			return nil, &Error{File: dir, Stream: -1, Step: -1, Tensor: ts.Name, Msg: "missing required input file " + ts.Name}
		}
		s, err := readBinary(filepath.Join(dir, ts.Name), ts, src)
		if err != nil {
			return nil, err
		}
		in[ts.Name] = s
	}
	var out map[string]sample
	for _, ts := range spec.Outputs {
		if !present[ts.Name] {
			continue
		}
		s, err := readBinary(filepath.Join(dir, ts.Name), ts, src)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]sample{}
		}
		out[ts.Name] = s
	}
	return &sampleSet{
		inputs:  [][]map[string]sample{{in}},
		outputs: [][]map[string]sample{{out}},
		origins: [][]string{{dir}},
		locs:    [][]loc{{{file: dir, stream: -1, step: -1}}},
	}, nil
}

func readBinary(path string, ts TensorSpec, src Source) (sample, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return sample{}, &Error{File: path, Stream: -1, Step: -1, Tensor: ts.Name, Msg: "cannot read input data", Err: err}
	}
	l := loc{file: path, stream: -1, step: -1, tensor: ts.Name}
	var raw []byte
	var count int64
	if ts.DataType == tensor.BYTES {
		lines := bytes.Split(data, []byte{'\n'})
		if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1] // a final newline ends the last element
		}
		raw, count = tensor.EncodeBytesElements(lines), int64(len(lines))
	} else {
		size := int64(ts.DataType.Size())
		if int64(len(data))%size != 0 {
			return sample{}, l.err(nil, fmt.Sprintf("a multiple of %d bytes for %s", size, ts.DataType), fmt.Sprintf("%d bytes", len(data)))
		}
		raw, count = data, int64(len(data))/size
	}
	shape, err := resolveShape(l, nil, ts, dimsFor(ts, src), count, false)
	if err != nil {
		return sample{}, err
	}
	return sample{shape: shape, raw: raw}, nil
}

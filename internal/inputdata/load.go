package inputdata

import (
	"fmt"
)

// Load checks src against spec and builds every request payload up front, so
// a mismatch surfaces before any load is sent and workers only index slices.
// Every fault in the data or the source options is an *Error; a plain error
// means the ModelSpec itself is unusable (a caller or server-metadata bug).
func Load(spec ModelSpec, src Source) (*Data, error) {
	if err := checkSpec(spec); err != nil {
		return nil, err
	}
	src, err := normalize(spec, src)
	if err != nil {
		return nil, err
	}
	var set *sampleSet
	switch src.Kind {
	case KindRandom, KindZero:
		set, err = generate(spec, src)
	case KindDir:
		set, err = readDir(spec, src)
	case KindJSON:
		set, err = readJSONFiles(spec, src)
	}
	if err != nil {
		return nil, err
	}
	d, err := assemble(spec, src, set)
	if d != nil {
		d.FromJSON = src.Kind == KindJSON
	}
	return d, err
}

// sampleSet is the batch-1 data before requests are assembled: per stream and
// step, a sample per tensor name (absent for optional inputs left out).
type sampleSet struct {
	streamed bool
	inputs   [][]map[string]sample
	outputs  [][]map[string]sample // nil entries when no validation data
	origins  [][]string
	locs     [][]loc // for batch errors
}

func readJSONFiles(spec ModelSpec, src Source) (*sampleSet, error) {
	set := &sampleSet{}
	for fi, path := range src.Paths {
		f, err := readJSONFile(path)
		if err != nil {
			return nil, err
		}
		if fi > 0 && f.streamed != set.streamed {
			return nil, &Error{File: path, Stream: -1, Step: -1,
				Expected: form(set.streamed) + " like " + src.Paths[0], Found: form(f.streamed)}
		}
		set.streamed = f.streamed
		for si, steps := range f.steps {
			var ins, outs []map[string]sample
			var origins []string
			var locs []loc
			for k, step := range steps {
				l := loc{file: path, src: f.src, stream: -1, step: k}
				if f.streamed {
					l.stream = si
				}
				in, err := readStep(l, step, spec.Inputs, spec, src, true)
				if err != nil {
					return nil, err
				}
				var out map[string]sample
				if f.expect != nil {
					lv := l
					lv.validation = true
					if out, err = readStep(lv, f.expect[si][k], spec.Outputs, spec, src, false); err != nil {
						return nil, err
					}
				}
				ins, outs = append(ins, in), append(outs, out)
				origins = append(origins, l.origin())
				locs = append(locs, l)
			}
			// Flat files all feed stream 0, as perf_analyzer appends their
			// steps; stream files add streams.
			if !f.streamed && len(set.inputs) == 1 {
				set.inputs[0] = append(set.inputs[0], ins...)
				set.outputs[0] = append(set.outputs[0], outs...)
				set.origins[0] = append(set.origins[0], origins...)
				set.locs[0] = append(set.locs[0], locs...)
				continue
			}
			set.inputs = append(set.inputs, ins)
			set.outputs = append(set.outputs, outs)
			set.origins = append(set.origins, origins)
			set.locs = append(set.locs, locs)
		}
	}
	return set, nil
}

func (l loc) origin() string {
	s := l.file
	if l.stream >= 0 {
		s += fmt.Sprintf(" stream %d", l.stream)
	}
	if l.step >= 0 {
		s += fmt.Sprintf(" step %d", l.step)
	}
	return s
}

// readStep decodes one step object: every key must name a model tensor (or be
// perf_analyzer's "model" key), and every required input must be present.
func readStep(l loc, step value, tensors []TensorSpec, spec ModelSpec, src Source, inputs bool) (map[string]sample, error) {
	out := make(map[string]sample, len(tensors))
	kindName := "output"
	if inputs {
		kindName = "input"
	}
	for i, key := range step.c.keys {
		at := step.c.fields[i]
		if key == "model" && inputs {
			continue // perf_analyzer tolerates a "model" member in a step
		}
		ts, ok := find(tensors, key)
		if !ok {
			lk := l
			lk.tensor = key
			return nil, lk.errf(&step.c.keyAt[i], "model %s has no %s %s (%ss: %s)", spec.Name, kindName, key, kindName, names(tensors))
		}
		lt := l
		lt.tensor = key
		s, err := decodeTensor(lt, at, ts, src)
		if err != nil {
			return nil, err
		}
		out[key] = s
	}
	if inputs {
		for _, ts := range tensors {
			if _, ok := out[ts.Name]; !ok && !ts.Optional {
				lt := l
				lt.tensor = ts.Name
				return nil, lt.errf(&step, "missing required input %s", ts.Name)
			}
		}
	}
	return out, nil
}

func find(ts []TensorSpec, name string) (TensorSpec, bool) {
	for _, t := range ts {
		if t.Name == name {
			return t, true
		}
	}
	return TensorSpec{}, false
}

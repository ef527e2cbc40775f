package baseline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/perfscen/perfscen/internal/atomicfile"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/jsonpos"
	"github.com/perfscen/perfscen/runner/plan"
)

// Load reads a baseline file. A missing file yields an error satisfying
// errors.Is(err, fs.ErrNotExist); any other failure is marked
// failure.InvalidInput.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reading baseline: %w", err)
		}
		return nil, failure.Invalid(fmt.Errorf("reading baseline: %w", err))
	}
	f, err := Decode(path, b)
	if err != nil {
		return nil, failure.Invalid(err)
	}
	return f, nil
}

// Decode parses a baseline document strictly: unknown fields, trailing
// data, a missing or newer format_version and inconsistent keys are
// errors naming name:line:col or the offending field.
func Decode(name string, b []byte) (*File, error) {
	var probe struct {
		FormatVersion *int `json:"format_version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%s: not a baseline file: %w", name, jsonpos.Describe(b, err, -1))
	}
	if probe.FormatVersion == nil {
		return nil, fmt.Errorf("%s: not a baseline file: no format_version field", name)
	}
	if v := *probe.FormatVersion; v > FormatVersion {
		return nil, fmt.Errorf("%s: baseline format_version %d is newer than this perfscen understands (%d); upgrade perfscen", name, v, FormatVersion)
	} else if v < 1 {
		return nil, fmt.Errorf("%s: invalid format_version %d", name, v)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, jsonpos.Describe(b, err, dec.InputOffset()))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: trailing data after the baseline document", name)
	}
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if *probe.FormatVersion < 3 {
		dropOldWork(&f)
	}
	return &f, nil
}

// dropOldWork removes server_work_infer from a history recorded before
// version 3, whose values are in units of another kernel (FormatVersion).
func dropOldWork(f *File) {
	for _, tb := range f.Testbeds {
		for _, r := range tb.Runs {
			for _, p := range r.Points {
				delete(p.Summary, plan.MetricServerWork)
				for _, t := range p.Trials {
					delete(t.Values, plan.MetricServerWork)
				}
			}
		}
	}
}

func (f *File) validate() error {
	if f.Scenario == "" {
		return errors.New("scenario: must not be empty")
	}
	if f.Testbeds == nil {
		f.Testbeds = map[string]*Testbed{}
	}
	for id, tb := range f.Testbeds {
		if tb == nil {
			return fmt.Errorf("testbeds.%s: must be an object", id)
		}
		if tb.ID != id {
			return fmt.Errorf("testbeds.%s.id: %q does not match its key", id, tb.ID)
		}
		for i, r := range tb.Runs {
			for pid, p := range r.Points {
				at := fmt.Sprintf("testbeds.%s.runs[%d].points.%s", id, i, pid)
				if p == nil {
					return fmt.Errorf("%s: must be an object", at)
				}
				if err := finite(at+".summary", p.Summary); err != nil {
					return err
				}
				for j, t := range p.Trials {
					if err := finite(fmt.Sprintf("%s.trials[%d].values", at, j), t.Values); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func finite(at string, m map[string]float64) error {
	for k, v := range m {
		if math.IsInf(v, 0) || math.IsNaN(v) || v < 0 {
			return fmt.Errorf("%s.%s: %v is not a non-negative number", at, k, v)
		}
	}
	return nil
}

// Encode renders f as indented JSON with a trailing newline.
func Encode(f *File) ([]byte, error) {
	// Whatever version was read, what is written has this version's shape.
	f.FormatVersion = FormatVersion
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding baseline: %w", err)
	}
	return append(b, '\n'), nil
}

// Save writes f atomically; readers see the old or the new file, never a
// torn one.
func Save(path string, f *File) error {
	b, err := Encode(f)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, b, 0o644)
}

// CheckScenario refuses a baseline recorded for another scenario.
func (f *File) CheckScenario(scenario string) error {
	if f.Scenario != scenario {
		return failure.Invalid(fmt.Errorf("baseline is for scenario %q, not %q", f.Scenario, scenario))
	}
	return nil
}

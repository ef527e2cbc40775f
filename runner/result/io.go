package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/perfscen/perfscen/internal/atomicfile"
)

// Encode renders r as indented JSON, with every point's figures.
func Encode(r *Run) ([]byte, error) {
	if r.SchemaVersion == 0 {
		r.SchemaVersion = SchemaVersion
	}
	return json.MarshalIndent(WithFigures(r), "", "  ")
}

// WithFigures is a copy of r whose points carry their figures, as the JSON
// documents write them; r is not changed.
func WithFigures(r *Run) *Run {
	out := *r
	out.Points = make([]Point, len(r.Points))
	for i := range r.Points {
		p := r.Points[i]
		figs := p.FigureMetrics()
		p.Figures = &figs
		out.Points[i] = p
	}
	if r.Points == nil {
		out.Points = nil
	}
	return &out
}

// WriteFile writes r atomically.
func WriteFile(path string, r *Run) error {
	b, err := Encode(r)
	if err != nil {
		return fmt.Errorf("encoding results: %w", err)
	}
	return atomicfile.Write(path, append(b, '\n'), 0o644)
}

// Decode parses a result document, refusing unknown fields and documents
// written by a newer perfscen.
func Decode(name string, b []byte) (*Run, error) {
	var probe struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%s: not a result document: %w", name, err)
	}
	if probe.SchemaVersion == nil {
		return nil, fmt.Errorf("%s: not a result document: no schema_version field", name)
	}
	if *probe.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s: result schema version %d is newer than this perfscen understands (%d); upgrade perfscen", name, *probe.SchemaVersion, SchemaVersion)
	}
	if *probe.SchemaVersion < 1 {
		return nil, fmt.Errorf("%s: invalid schema_version %d", name, *probe.SchemaVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Run
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// Figures are derived from the trials; a stale or edited copy must
	// not stand in for them.
	for i := range r.Points {
		r.Points[i].Figures = nil
	}
	return &r, nil
}

// ReadFile reads and decodes a result document.
func ReadFile(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	return Decode(path, b)
}

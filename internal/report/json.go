package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/result"
)

// ReportSchemaVersion versions the JSON report wrapper; the result inside
// carries its own schema_version.
const ReportSchemaVersion = 1

// Document is the JSON report: the result document and the verdict.
type Document struct {
	SchemaVersion int              `json:"schema_version"`
	Result        *result.Run      `json:"result"`
	Verdict       *verdict.Verdict `json:"verdict"`
}

// JSON writes {"schema_version":1,"result":…,"verdict":…}; verdict is null
// when no checks were evaluated.
func JSON(w io.Writer, run *result.Run, v *verdict.Verdict, _ Options) error {
	r := *result.WithFigures(run)
	if r.SchemaVersion == 0 {
		r.SchemaVersion = result.SchemaVersion
	}
	b, err := json.MarshalIndent(Document{SchemaVersion: ReportSchemaVersion, Result: &r, Verdict: v}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding json report: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

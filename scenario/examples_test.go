package scenario

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// Every shipped example must load and expand cleanly.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example scenarios found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			p, err := LoadPlan(f, nil)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if len(p.Points) == 0 && len(p.Searches) == 0 {
				t.Fatal("nothing to measure: no points, no searches")
			}
			if testing.Verbose() {
				b, _ := json.MarshalIndent(p, "", "  ")
				t.Logf("%s", b)
			}
		})
	}
}

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A shipped baseline was recorded from the scenario file as it is now: an
// edit to the file (a description included) makes every run of it warn
// that the scenario changed since the baseline, starting with the
// README's first command. Re-record it (make baselines), or, when the edit
// cannot change what is measured, carry the new hash over.
func TestShippedBaselinesMatchTheirScenarios(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "baselines", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped baselines (%v)", err)
	}
	for _, b := range files {
		name := strings.TrimSuffix(filepath.Base(b), ".json")
		body, err := os.ReadFile(filepath.Join(root, "scenarios", name+".yaml"))
		if err != nil {
			continue // a baseline of a scenario kept elsewhere
		}
		sum := sha256.Sum256(body)
		raw, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			ScenarioHash string `json:"scenario_hash"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if f.ScenarioHash != hex.EncodeToString(sum[:]) {
			t.Errorf("%s was recorded from another scenarios/%s.yaml (hash %.12s, the file's %.12s)", b, name, f.ScenarioHash, hex.EncodeToString(sum[:]))
		}
	}
}

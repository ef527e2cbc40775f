package fleet

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
)

// The data digest follows the files' names (relative to the scenario)
// and bytes, a directory's files included, and not where the scenario
// lies on the host.
func TestDataDigest(t *testing.T) {
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree := func(json, raw string) *plan.Plan {
		dir := t.TempDir()
		write(filepath.Join(dir, "data.json"), json)
		write(filepath.Join(dir, "raw", "INPUT0"), raw)
		write(filepath.Join(dir, "raw", "INPUT1"), "1234")
		return &plan.Plan{ScenarioPath: filepath.Join(dir, "s.yaml"), Models: []plan.Model{
			{Alias: "a", Input: plan.Input{Kind: "json", Paths: []string{filepath.Join(dir, "data.json")}}},
			{Alias: "b", Input: plan.Input{Kind: "dir", Paths: []string{filepath.Join(dir, "raw")}}},
			{Alias: "c", Input: plan.Input{Kind: "json", Paths: []string{filepath.Join(dir, "data.json")}}},
		}}
	}
	digest := func(p *plan.Plan) string {
		t.Helper()
		d, files, err := DataDigest(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 2 || files[0] != "data.json" || files[1] != "raw" {
			t.Errorf("files %q", files)
		}
		return d
	}
	base := digest(tree(`{"data": []}`, "abcd"))
	if again := digest(tree(`{"data": []}`, "abcd")); again != base || base == "" {
		t.Errorf("same data elsewhere: %q, %q", base, again)
	}
	if d := digest(tree(`{"data": [ ]}`, "abcd")); d == base {
		t.Error("a JSON file's change is not seen")
	}
	if d := digest(tree(`{"data": []}`, "abce")); d == base {
		t.Error("a change in a directory's file is not seen")
	}
	if d, files, err := DataDigest(&plan.Plan{Models: []plan.Model{{Input: plan.Input{Kind: "random"}}}}); d != "" || files != nil || err != nil {
		t.Errorf("no files: %q %q %v", d, files, err)
	}
}

package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// figuresScenario keeps five windows per point whose throughput differs
// from window to window (drift), so a mean, a pooled merge and a median
// of them are three different numbers.
const figuresScenario = `version: 1
name: figures
server:
  embedded: true
  timeout: 5s
  embedded_models:
    simple: {added_latency: 1ms, drift: 2ms}
models:
  - name: simple
load:
  mode: concurrency
sweep:
  concurrency: "1:1:1"
measurement:
  window: 400ms
  stability: 900%
  max_trials: 3
  trials: 5
thresholds:
  - throughput >= 1/s
baseline:
  path: figures-baseline.json
  metrics: [throughput]
  tolerances: {throughput: -90%}
`

// Problem 5: one figure is one number in every output. The point's
// throughput in the console's points table, the result JSON, the CSV and
// the Markdown table, and the value of the threshold and baseline checks
// on it, are the same median of the kept trials.
//
// The runs are in memory on the fake clock (runMem): on real time a
// starved machine can leave a window empty or ten times slower than the
// recorded run, and the verdict (unstable, a regression, disturbed) would
// then decide the exit code, which is not what this test is about.
func TestOneFigureEverywhere(t *testing.T) {
	synctest.Test(t, oneFigureEverywhere)
}

func oneFigureEverywhere(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenario(t, dir, "figures.yaml", figuresScenario)
	// One recorded run, so the run below gets a baseline check.
	first := filepath.Join(dir, "first.json")
	if code, stdout, stderr := runMem(t, "run", "-q", "--out", first, "--no-baseline", sc); code != 0 {
		t.Fatalf("first run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runMem(t, "baseline", "update", "--from", first); code != 0 {
		t.Fatalf("recording: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr := runMem(t, "run", "--out", filepath.Join(dir, "r.json"), "--csv", filepath.Join(dir, "r.csv"),
		"--markdown", filepath.Join(dir, "r.md"), sc)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	const point = "simple/c=1"
	run, err := result.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := &run.Points[0]
	fig, ok := p.Figure(plan.MetricThroughput)
	if !ok || fig.Stat != result.StatMedian || fig.Trials != 5 {
		t.Fatalf("figure %+v", fig)
	}
	want := strconv.FormatFloat(fig.Value, 'g', 6, 64)

	// The JSON as written carries the same figure for its readers.
	var doc struct {
		Points []struct {
			Figures *struct {
				Throughput float64 `json:"throughput"`
			} `json:"figures"`
		} `json:"points"`
	}
	readJSON(t, filepath.Join(dir, "r.json"), &doc)
	if len(doc.Points) != 1 || doc.Points[0].Figures == nil || doc.Points[0].Figures.Throughput != fig.Value {
		t.Errorf("result JSON figures: %+v, want throughput %g", doc.Points, fig.Value)
	}
	if got := tableCell(t, stdout, "infer/s", point); got != want {
		t.Errorf("console points table: %s infer/s, the figure is %s", got, want)
	}
	md, err := os.ReadFile(filepath.Join(dir, "r.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tableCell(t, string(md), "infer/s", point); got != want {
		t.Errorf("Markdown points table: %s infer/s, the figure is %s", got, want)
	}
	f, err := os.Open(filepath.Join(dir, "r.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 2 || rows[0][1] != "Inferences/Second" {
		t.Fatalf("csv: %v %q", err, rows)
	}
	if rows[1][1] != want {
		t.Errorf("CSV: %s infer/s, the figure is %s", rows[1][1], want)
	}
	checked := 0
	for _, c := range run.Verdict.Checks {
		if c.Metric != plan.MetricThroughput || c.Point != point {
			continue
		}
		checked++
		if c.Value != fig.Value {
			t.Errorf("%s check %q: value %g, the figure is %g", c.Kind, c.Name, c.Value, fig.Value)
		}
	}
	if checked != 2 {
		t.Errorf("%d throughput checks, want a threshold and a baseline check", checked)
	}
	// The console says what the figure is.
	if !strings.Contains(stdout, "figures are medians over each point's kept trials") {
		t.Errorf("console does not label its figures:\n%s", stdout)
	}
}

// readJSON decodes a file as it was written, for what result.ReadFile
// recomputes on reading (the figures).
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// tableCell returns the cell under header in the row of a table (console
// box drawing or Markdown) whose first cell is row.
func tableCell(t *testing.T, out, header, row string) string {
	t.Helper()
	col := -1
	for _, line := range strings.Split(out, "\n") {
		cells := splitRow(line)
		if col < 0 {
			for i, c := range cells {
				if c == header {
					col = i
				}
			}
			continue
		}
		if len(cells) > col && cells[0] == row {
			return cells[col]
		}
	}
	t.Fatalf("no %q cell for %q in:\n%s", header, row, out)
	return ""
}

var rowSep = regexp.MustCompile(`[│|]`)

func splitRow(line string) []string {
	if !rowSep.MatchString(line) {
		return nil
	}
	parts := rowSep.Split(strings.TrimSpace(line), -1)
	var cells []string
	for _, p := range parts[1 : len(parts)-1] {
		cells = append(cells, strings.TrimSpace(p))
	}
	return cells
}

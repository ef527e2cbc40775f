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

// extraTrialsScenario has a comparison that its planned trials cannot
// decide (two arms of one model, equal but for drift), so its points get
// extra trials, and thresholds on those points.
const extraTrialsScenario = `version: 1
name: extra-figures
server:
  embedded: true
  timeout: 5s
  embedded_models:
    simple: {added_latency: 1ms, drift: 2ms}
models:
  - name: simple
    alias: a
  - name: simple
    alias: b
load:
  mode: concurrency
  concurrency: 1
measurement:
  window: 400ms
  stability: 900%
  max_trials: 3
  trials: 10
gate:
  max_extra_trials: 10
thresholds:
  - throughput >= 1/s
  - p99 < 10s
comparisons:
  - name: b-faster
    candidate: b
    reference: a
    metric: throughput
    min_ratio: 1.0
`

// Issue 39, item 11: after extra trials the threshold checks judged the
// points' first trials (n = 10 in a run whose table showed 22 trials and
// other figures). Thresholds spend no α, so they are judged again on the
// figures after every look: a threshold check's value and n are the
// point's figure and trial count, and the points table shows the same.
func TestOneFigureAfterExtraTrials(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		sc := writeScenario(t, dir, "extra.yaml", extraTrialsScenario)
		code, stdout, stderr := runMem(t, "run", "--out", filepath.Join(dir, "r.json"), sc)
		if code != 0 && code != 4 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		run, err := result.ReadFile(filepath.Join(dir, "r.json"))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for i := range run.Points {
			p := &run.Points[i]
			if len(p.Trials) <= 10 {
				t.Fatalf("%s: %d trials; the comparison got no extra trials\n%s", p.ID, len(p.Trials), stderr)
			}
			for _, metric := range []string{plan.MetricThroughput, plan.MetricP99} {
				fig, ok := p.Figure(metric)
				if !ok {
					t.Fatalf("%s: no %s", p.ID, metric)
				}
				for _, c := range run.Verdict.Checks {
					if c.Kind != "threshold" || c.Metric != metric || c.Point != p.ID {
						continue
					}
					checked++
					if c.Value != fig.Value {
						t.Errorf("%s %q: value %g, the point's figure is %g", p.ID, c.Name, c.Value, fig.Value)
					}
				}
			}
			if got, want := tableCell(t, stdout, "trials", p.ID), strconv.Itoa(len(p.Trials)); got != want {
				t.Errorf("%s: the points table shows %s trials, the point has %s", p.ID, got, want)
			}
			// The console's checks table says over how many trials.
			var kind, point, n = -1, -1, -1
			rows := 0
			for _, line := range strings.Split(stdout, "\n") {
				cells := splitRow(line)
				if kind < 0 {
					for i, c := range cells {
						switch c {
						case "kind":
							kind = i
						case "model/point":
							point = i
						case "n":
							n = i
						}
					}
					if point < 0 || n < 0 {
						kind = -1
					}
					continue
				}
				if len(cells) > n && cells[kind] == "threshold" && cells[point] == p.ID {
					rows++
					if cells[n] != strconv.Itoa(len(p.Trials)) {
						t.Errorf("%s: a threshold's n is %s, the point has %d trials:\n%s", p.ID, cells[n], len(p.Trials), line)
					}
				}
			}
			if rows != 2 {
				t.Errorf("%s: %d threshold rows in the checks table, want 2", p.ID, rows)
			}
		}
		if checked != 4 {
			t.Errorf("%d threshold checks, want 4", checked)
		}
	})
}

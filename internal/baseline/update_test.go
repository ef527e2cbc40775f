package baseline

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/stats"

	"github.com/perfscen/perfscen/runner/result"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestUpdateHistory(t *testing.T) {
	f := New("demo")
	var diffs strings.Builder
	for i, lv := range []float64{1, 1.01, 0.99, 1, 1.02} {
		run := mkRun("demo", lv, 2*lv)
		if i == 4 {
			run.Points = run.Points[1:]
			run.Points = append(run.Points, mkRun("demo", 1, 1, 3).Points[2])
			run.ScenarioHash = "h2"
		}
		d, err := Update(f, run, UpdateOptions{Keep: 3, Now: time.Date(2025, 1, i+1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&diffs, "== update %d\n%s", i+1, d)
	}
	tb := f.Testbeds["tb1"]
	if len(tb.Runs) != 3 || !tb.Runs[0].Recorded.Equal(time.Date(2025, 1, 5, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("history not trimmed to 3, newest first: %d runs", len(tb.Runs))
	}
	e := tb.Noise["m/c=2"]["throughput"]
	if e.Runs != 3 || e.Trials != 10 || e.JobSD <= 0 || e.MDE <= 0 || e.TrialCV <= 0 {
		t.Errorf("noise estimate: %+v", e)
	}
	d, err := Update(f, mkRun("demo", 1), UpdateOptions{Replace: true, Now: time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&diffs, "== replace\n%s", d)
	if len(tb.Runs) != 1 {
		t.Errorf("replace kept %d runs", len(tb.Runs))
	}
	golden(t, "update_diffs.golden", diffs.String())
}

func TestUpdateRefusesBadRuns(t *testing.T) {
	for _, st := range []string{result.PointUnstable, result.PointFailed, result.PointPartial} {
		run := mkRun("demo", 1)
		run.Points[0].Status = st
		f := New("demo")
		if _, err := Update(f, run, UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "--force") {
			t.Errorf("%s point accepted: %v", st, err)
		}
		if len(f.Testbeds) != 0 {
			t.Errorf("refused update changed the file")
		}
		if _, err := Update(f, run, UpdateOptions{Force: true}); err != nil {
			t.Errorf("forced %s: %v", st, err)
		}
	}
	run := mkRun("demo", 1)
	run.Status = result.StatusInterrupted
	if _, err := Update(New("demo"), run, UpdateOptions{}); err == nil {
		t.Error("interrupted run accepted")
	}
	// allow_unstable scenarios may record unstable points, never failed or
	// partial ones.
	for st, ok := range map[string]bool{result.PointUnstable: true, result.PointFailed: false, result.PointPartial: false} {
		run := mkRun("demo", 1)
		run.Points[0].Status = st
		_, err := Update(New("demo"), run, UpdateOptions{AllowUnstable: true})
		if (err == nil) != ok {
			t.Errorf("AllowUnstable, %s point: err = %v", st, err)
		}
	}
}

// A run whose recorded verdict passed had its unstable points judged on
// their kept trials (allow_unstable: without it the run exits 3), so
// `baseline update --from` records them, marked unstable, and says so; a
// busy runner's main-branch job would otherwise never grow its history.
func TestUpdateRecordsUnstablePointsOfPassingRun(t *testing.T) {
	run := mkRun("demo", 1, 2)
	run.Points[0].Status = result.PointUnstable
	run.Verdict = &result.Verdict{Outcome: result.OutcomePass}
	f := New("demo")
	d, err := Update(f, run, UpdateOptions{})
	if err != nil {
		t.Fatalf("passing run with an unstable point refused: %v", err)
	}
	if got := f.Testbeds["tb1"].Runs[0].Points["m/c=1"].Status; got != result.PointUnstable {
		t.Errorf("recorded status %q, want unstable", got)
	}
	if len(d.Unstable) != 1 || d.Unstable[0] != "m/c=1" || !strings.Contains(d.String(), "~ point m/c=1 recorded as unstable") {
		t.Errorf("diff does not say which point was unstable: %v\n%s", d.Unstable, d)
	}
	// A run that did not pass is refused whatever its points.
	run = mkRun("demo", 1)
	run.Points[0].Status = result.PointUnstable
	run.Verdict = &result.Verdict{Outcome: result.OutcomeInconclusive, ExitCode: 4}
	if _, err := Update(New("demo"), run, UpdateOptions{}); err == nil {
		t.Error("inconclusive run recorded")
	}
	// A failed point is never recorded without --force, verdict or not.
	run = mkRun("demo", 1)
	run.Points[0].Status = result.PointFailed
	run.Verdict = &result.Verdict{Outcome: result.OutcomePass}
	if _, err := Update(New("demo"), run, UpdateOptions{}); err == nil {
		t.Error("failed point recorded")
	}
}

// Two updaters at once must both land: the lock serializes the
// read-modify-write so neither overwrites the other's run.
func TestUpdateFileConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.json")
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			run := mkRun("demo", 1+float64(i)/100)
			_, err := UpdateFile(path, run, UpdateOptions{Now: time.Unix(int64(i), 0)}, func(*Diff) error {
				time.Sleep(2 * time.Millisecond) // widen the window a lost update would need
				return nil
			})
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.Testbeds["tb1"].Runs); n != writers {
		t.Fatalf("history has %d runs, want %d: an update was lost", n, writers)
	}
	// Nothing but the baseline is left beside it: no lock file for users'
	// repositories to ignore.
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "demo.json" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("folder holds %v, want demo.json alone", names)
	}
}

func TestUpdateFileConfirmAborts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.json")
	_, err := UpdateFile(path, mkRun("demo", 1), UpdateOptions{}, func(*Diff) error { return fmt.Errorf("no") })
	if err == nil {
		t.Fatal("want the confirm error")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("file written despite abort: %v", err)
	}
}

func TestCalibrate(t *testing.T) {
	var runs []*result.Run
	for _, lv := range []float64{1, 1.02, 0.98, 1.01, 0.99} {
		runs = append(runs, mkRun("demo", lv))
	}
	n := Calibrate(runs)
	e := n["m/c=1"]["throughput"]
	// run medians are exactly 1000·lv, so the job SD is that of log(lv)
	want := stats.LogSD([]float64{1, 1.02, 0.98, 1.01, 0.99})
	if e.Runs != 5 || abs(e.JobSD-want) > 1e-12 {
		t.Fatalf("estimate %+v, want job sd %g", e, want)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// A history is kept in the order its runs started, and a full one drops
// the run that started first, so recording runs out of order (results of
// several CI jobs gathered later) keeps the same history as recording
// them as they ran.
func TestUpdateKeepsStartOrder(t *testing.T) {
	runs := make([]*result.Run, 5)
	for i := range runs {
		runs[i] = mkRun("demo", 1+0.01*float64(i))
	}
	starts := func(order []int) []time.Time {
		f := New("demo")
		for k, i := range order {
			if _, err := Update(f, runs[i], UpdateOptions{Keep: 3, Now: time.Date(2025, 3, 1, k, 0, 0, 0, time.UTC)}); err != nil {
				t.Fatal(err)
			}
		}
		var out []time.Time
		for _, r := range f.Testbeds["tb1"].Runs {
			out = append(out, r.Started)
		}
		return out
	}
	want := []time.Time{runs[4].Started, runs[3].Started, runs[2].Started}
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {3, 4, 0, 2, 1}} {
		if got := starts(order); !slices.EqualFunc(got, want, time.Time.Equal) {
			t.Errorf("recorded in order %v: history started %v, want %v", order, got, want)
		}
	}
}

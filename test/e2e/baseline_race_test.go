package e2e

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/result"
)

// Two "perfscen baseline update" processes recording different runs into
// the same file at the same moment: the lock serializes them, so both
// runs are in the history afterwards, however their steps interleave.
func TestConcurrentBaselineUpdatesLoseNothing(t *testing.T) {
	dir := t.TempDir()
	runs := make([]string, 2)
	started := map[int64]bool{}
	for i := range runs {
		runs[i] = filepath.Join(dir, "r"+string(rune('1'+i))+".json")
		if code, _, stderr := perfscen(t, "run", "testdata/tiny.yaml", "-q", "--out", runs[i], "--format", "json"); code != 0 {
			t.Fatalf("recording run %d: exit %d\n%s", i, code, stderr)
		}
		r, err := result.ReadFile(runs[i])
		if err != nil {
			t.Fatal(err)
		}
		started[r.Started.UnixNano()] = true
	}
	if len(started) != 2 {
		t.Fatal("the two runs share a start time; they would be indistinguishable in the history")
	}
	const rounds = 8
	for round := range rounds {
		base := filepath.Join(dir, "b"+string(rune('a'+round))+".json")
		var wg sync.WaitGroup
		outs := make([][]byte, len(runs))
		errs := make([]error, len(runs))
		for i, r := range runs {
			wg.Go(func() {
				outs[i], errs[i] = exec.Command(perfscenBin(t), "baseline", "update", "--from", r, "--baseline", base).CombinedOutput()
			})
		}
		wg.Wait()
		for i := range runs {
			if errs[i] != nil {
				t.Fatalf("round %d, update %d: %v\n%s", round, i, errs[i], outs[i])
			}
		}
		f, err := baseline.Load(base)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got := map[int64]bool{}
		for _, tb := range f.Testbeds {
			for _, r := range tb.Runs {
				got[r.Started.UnixNano()] = true
			}
		}
		if len(got) != 2 {
			t.Fatalf("round %d: the history holds %d distinct runs, want both of %d", round, len(got), len(started))
		}
		for s := range started {
			if !got[s] {
				t.Fatalf("round %d: the run started at %d was lost", round, s)
			}
		}
	}
}

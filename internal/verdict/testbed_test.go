package verdict

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// A history filed before perfscen recorded the CPU's identity still gates
// a run on a CPU of the same name, and the run says, as a warning, that
// the history may come from another CPU under that name.
func TestPreIdentityHistoryIsNamed(t *testing.T) {
	env := result.Environment{CPU: "AMD EPYC", NumCPU: 2, MemoryGiB: 24, TestbedSource: "derived"}
	env.Testbed = result.DerivedTestbed(env)
	rng := rand.New(rand.NewPCG(3, 4))
	f := baseline.New("demo")
	for i := 0; i < 5; i++ {
		run := mkRun(mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000, 20000, 0.02)))
		run.Environment = env
		if _, err := baseline.Update(f, run, baseline.UpdateOptions{Now: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	run := mkRun(mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000, 20000, 0.02)))
	run.Environment = env
	run.Environment.CPUID = "vendor_id=AuthenticAMD cpu family=25 model=17 stepping=1; L2 1024K"
	run.Environment.Testbed = result.DerivedTestbed(run.Environment)
	got := Options{}.Baseline(&plan.Baseline{Path: "b.json", Metrics: []string{"throughput"}}, f, run)
	var testbed, gated *Check
	for i := range got {
		switch got[i].Key {
		case KeyTestbed:
			testbed = &got[i]
		default:
			gated = &got[i]
		}
	}
	if testbed == nil || testbed.Status != StatusWarn || !strings.Contains(testbed.Message, "perhaps another CPU under that name") ||
		!strings.Contains(testbed.Message, env.Testbed) {
		t.Fatalf("testbed check = %+v; want a warning naming %s", testbed, env.Testbed)
	}
	if gated == nil || gated.Status != StatusPass || gated.NRef != 5 {
		t.Errorf("throughput check = %+v; want a pass against the 5-run history", gated)
	}
}

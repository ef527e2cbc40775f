package baseline

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/result"
)

// A history recorded under a hostname-hashed id (format 1) keeps gating a
// run on the same hardware under any hostname, and moves under the
// derived key at the next update.
func TestLegacyTestbedFoundAndMigrated(t *testing.T) {
	legacyEnv := result.Environment{Host: "vm", CPU: "AMD EPYC", NumCPU: 2,
		Server: result.ServerInfo{Name: "perfscen-refserver", Version: "embedded"}}
	f := New("demo")
	old := mkRun("demo", 1)
	old.Environment = legacyEnv
	old.Environment.Testbed = "fae550d541ef"
	if _, err := Update(f, old, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Testbeds["fae550d541ef"].Environment.TestbedSource = "" // as format 1 wrote it

	run := mkRun("demo", 1)
	run.Environment = legacyEnv
	run.Environment.Host, run.Environment.MemoryGiB = "ci-runner-7f9c", 8
	run.Environment.Testbed, run.Environment.TestbedSource = "hw-000000000001", "derived"
	tb, id, from := f.Lookup(run)
	if tb == nil || id != "hw-000000000001" || from != "fae550d541ef" {
		t.Fatalf("Lookup = %v, %q, %q; want the legacy history", tb != nil, id, from)
	}

	named := *run
	named.Environment.Testbed, named.Environment.TestbedSource = "ci", "flag"
	if tb, _, _ := f.Lookup(&named); tb != nil {
		t.Error("a named testbed must not pick up a legacy history")
	}
	other := *run
	other.Environment.NumCPU = 4
	if tb, _, _ := f.Lookup(&other); tb != nil {
		t.Error("other hardware must not pick up a legacy history")
	}

	d, err := Update(f, run, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.MigratedFrom != "fae550d541ef" || d.RunsAfter != 2 || f.Testbeds["fae550d541ef"] != nil || f.Testbeds["hw-000000000001"] == nil {
		t.Fatalf("not migrated: %+v, testbeds %v", d, f.TestbedIDs())
	}
	if !strings.Contains(d.String(), "moved from legacy testbed fae550d541ef") {
		t.Errorf("diff does not say the history moved:\n%s", d)
	}
}

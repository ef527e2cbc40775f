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

// A history filed under a derived id before the CPU's identity was part
// of it keeps gating a run on a CPU of the same name (it may be another
// generation: the run says so), moves under the new id at the next
// update, and is never found once the history records an identity.
func TestPreIdentityTestbedFoundAndMigrated(t *testing.T) {
	env := result.Environment{CPU: "AMD EPYC", NumCPU: 2, MemoryGiB: 24,
		Server: result.ServerInfo{Name: "triton", Version: "embedded"}, TestbedSource: "derived"}
	env.Testbed = result.DerivedTestbed(env)
	f := New("demo")
	old := mkRun("demo", 1)
	old.Environment = env
	if _, err := Update(f, old, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	preID := env.Testbed

	run := mkRun("demo", 1)
	run.Environment = env
	run.Environment.CPUID = "vendor_id=AuthenticAMD cpu family=25 model=17 stepping=1; L2 1024K"
	run.Environment.Testbed = result.DerivedTestbed(run.Environment)
	tb, id, from := f.Lookup(run)
	if tb == nil || id != run.Environment.Testbed || from != preID || !PreIdentity(from, run) {
		t.Fatalf("Lookup = %v, %q, %q; want the history filed under %s", tb != nil, id, from, preID)
	}
	named := *run
	named.Environment.Testbed, named.Environment.TestbedSource = "ci", "flag"
	if tb, _, _ := f.Lookup(&named); tb != nil {
		t.Error("a named testbed must not pick up another testbed's history")
	}

	d, err := Update(f, run, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.MigratedFrom != preID || !d.PreIdentity || d.RunsAfter != 2 || f.Testbeds[preID] != nil || f.Testbeds[id] == nil {
		t.Fatalf("not migrated: %+v, testbeds %v", d, f.TestbedIDs())
	}
	if !strings.Contains(d.String(), "recorded before the CPU's family, model and caches were part of the id") {
		t.Errorf("diff does not say why the history moved:\n%s", d)
	}

	// Now that the history records an identity, another CPU of the same
	// name is another testbed.
	other := mkRun("demo", 1)
	other.Environment = env
	other.Environment.CPUID = "vendor_id=AuthenticAMD cpu family=25 model=1 stepping=1; L2 512K"
	other.Environment.Testbed = result.DerivedTestbed(other.Environment)
	if tb, _, from := f.Lookup(other); tb != nil {
		t.Errorf("another CPU generation found the history (from %q)", from)
	}
}

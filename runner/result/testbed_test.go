package result

import "testing"

// Two CPU generations under one model name are two testbeds, and an
// environment without the identity keeps the id it had before the
// identity was recorded, which PreIdentityTestbed also gives for one with
// it.
func TestDerivedTestbedTellsCPUsApart(t *testing.T) {
	old := Environment{CPU: "AMD EPYC", NumCPU: 2, MemoryGiB: 16, Server: ServerInfo{Name: "triton", Version: "2.50"}}
	const oldID = "hw-f1edd147a502" // the id this environment always had
	if got := DerivedTestbed(old); got != oldID {
		t.Fatalf("without an identity the id is %s, want %s", got, oldID)
	}
	zen3, zen4 := old, old
	zen3.CPUID = "vendor_id=AuthenticAMD cpu family=25 model=1 stepping=1; L1d 32K L1i 32K L2 512K L3 32768K"
	zen4.CPUID = "vendor_id=AuthenticAMD cpu family=25 model=17 stepping=1; L1d 32K L1i 32K L2 1024K L3 32768K"
	a, b := DerivedTestbed(zen3), DerivedTestbed(zen4)
	if a == b || a == oldID || b == oldID {
		t.Errorf("ids %s (zen3), %s (zen4), %s (none): want three", a, b, oldID)
	}
	if PreIdentityTestbed(zen3) != oldID || PreIdentityTestbed(zen4) != oldID {
		t.Errorf("PreIdentityTestbed = %s, %s; want %s", PreIdentityTestbed(zen3), PreIdentityTestbed(zen4), oldID)
	}
}

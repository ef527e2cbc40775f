package result

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// DerivedTestbed is the default testbed: a stable id of what decides the
// figures (CPU model, identity and count, memory, GPU model and count,
// server name and version) and never the hostname, which changes with
// every pod or autoscaled runner of one machine type. With several
// servers every server's scenario key, name and version go in, in key
// order: each one decides the figures of its own points.
//
// The CPU's identity (CPUID) goes in only where it was read, so an
// environment without it keeps the id perfscen derived before it was
// recorded (PreIdentityTestbed), and histories filed under that id are
// still found.
func DerivedTestbed(e Environment) string {
	parts := []string{e.CPU, strconv.Itoa(e.NumCPU), strconv.Itoa(e.MemoryGiB), e.GPUModel,
		strconv.Itoa(e.GPUCount), e.Server.Name, e.Server.Version}
	for _, s := range e.Servers {
		parts = append(parts, s.Key, s.Name, s.Version)
	}
	if e.CPUID != "" {
		parts = append(parts, "cpu_id", e.CPUID)
	}
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "hw-" + hex.EncodeToString(h[:6])
}

// PreIdentityTestbed is the id DerivedTestbed gave e before the CPU's
// identity was part of it: where a history was filed by a perfscen that
// did not record the identity.
func PreIdentityTestbed(e Environment) string {
	e.CPUID = ""
	return DerivedTestbed(e)
}

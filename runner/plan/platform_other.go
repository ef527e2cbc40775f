//go:build !linux

package plan

// perfscen supports Linux only (README.md, "Platform: Linux only"): it
// relies on POSIX shared memory under /dev/shm, flock and Linux signals.
// Every command imports plan, so this line stops a build for another OS
// with that reason instead of an undefined symbol deep in a dependency.
var _ int = "perfscen builds for Linux only; see README.md, Platform"

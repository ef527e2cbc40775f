// Package shm handles POSIX system shared-memory regions (/dev/shm) for
// the shared-memory extension, on both sides: the client creates regions
// (Create) that a local Triton-compatible server maps, and the reference
// server maps the regions clients register (Open). Keys this package makes
// carry the "perfscen_<pid>_" prefix so leftovers can be found and removed.
package shm

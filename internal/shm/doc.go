// Package shm creates POSIX system shared-memory regions (/dev/shm) that a
// local Triton-compatible server can map, for the shared-memory extension.
// Keys carry the "perfscen_<pid>_" prefix so leftovers can be found and removed.
package shm

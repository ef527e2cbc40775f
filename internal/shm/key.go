package shm

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Prefix starts every key this package makes.
const Prefix = "perfscen_"

// NewKey returns a shm_open-style key ("/perfscen_<pid>_<name>") unique to
// this process.
func NewKey(name string) string {
	return "/" + Prefix + strconv.Itoa(os.Getpid()) + "_" + name
}

// ownerPID extracts the pid from a file name made by NewKey.
func ownerPID(file string) (int, bool) {
	rest, ok := strings.CutPrefix(file, Prefix)
	if !ok {
		return 0, false
	}
	pidStr, _, ok := strings.Cut(rest, "_")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

func checkKey(key string) (string, error) {
	name := strings.TrimLeft(key, "/")
	if name == "" || strings.Contains(name, "/") || name == "." || name == ".." {
		return "", fmt.Errorf("shm key %q: must be a single path component, optionally with a leading slash", key)
	}
	return name, nil
}

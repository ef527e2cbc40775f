package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
)

// fleetIdentity is what a coordinator and its agents compare before an
// agent takes part: the version, and for a build whose version names no
// exact source (an unstamped "dev" build, or one from a work tree with
// uncommitted changes) a digest of the executable itself. Two such
// builds would otherwise read the same ("dev") and be accepted together
// while measuring with different code; the same binary copied to every
// host (an image, a CI artifact) has the same digest.
func fleetIdentity(v versionInfo, executable func() (string, error)) (string, error) {
	s := v.String()
	if !v.Modified && s != "dev" && !strings.HasSuffix(s, "-dirty") {
		return s, nil
	}
	path, err := executable()
	if err != nil {
		return "", fmt.Errorf("identifying this %s build for its agents: %w", s, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("identifying this %s build for its agents: %w", s, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("identifying this %s build for its agents: %w", s, err)
	}
	return s + "+build." + hex.EncodeToString(h.Sum(nil))[:16], nil
}

var (
	fleetIDOnce sync.Once
	fleetID     string
	fleetIDErr  error
)

// fleetVersion is this binary's fleetIdentity (computed once), or the
// version a test gives.
func (e *env) fleetVersion() (string, error) {
	if e.version != "" {
		return e.version, nil
	}
	fleetIDOnce.Do(func() {
		info, ok := debug.ReadBuildInfo()
		fleetID, fleetIDErr = fleetIdentity(buildVersion(ldflagVersion, info, ok), os.Executable)
	})
	return fleetID, fleetIDErr
}

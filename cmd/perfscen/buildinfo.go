package main

import (
	"runtime/debug"
	"strings"
)

// versionInfo is what a binary knows about the source it was built from.
type versionInfo struct {
	Version  string // module version, -ldflags version, or "dev"
	Revision string // VCS revision, "" when unknown
	Modified bool   // built from a work tree with uncommitted changes
}

// String is the single word written to result files and JUnit: the
// version when there is a real one, else the revision, else "dev".
func (v versionInfo) String() string {
	switch {
	case v.Version != "dev":
		return v.Version
	case v.Revision != "":
		s := "devel-" + short(v.Revision)
		if v.Modified {
			s += "-dirty"
		}
		return s
	}
	return "dev"
}

// buildVersion picks the version: an -ldflags value first (make build
// stamps git describe), then the module version Go records for `go
// install module@version` or a build inside a VCS checkout, then "dev".
// The VCS revision comes from the build info either way.
func buildVersion(ldflag string, info *debug.BuildInfo, ok bool) versionInfo {
	v := versionInfo{Version: "dev"}
	if ok && info != nil {
		if mv := info.Main.Version; mv != "" && mv != "(devel)" {
			v.Version = mv
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if ldflag != "" {
		v.Version = ldflag
	}
	return v
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return strings.TrimSpace(rev)
}

package main

import (
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name   string
		ldflag string
		info   *debug.BuildInfo
		want   versionInfo
		str    string
	}{
		{"no build info", "", nil, versionInfo{Version: "dev"}, "dev"},
		{"go install module@version", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			versionInfo{Version: "v1.2.3"}, "v1.2.3"},
		{"build in a clone: pseudo-version and revision", "",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261122160000-0123456789ab+dirty"}, Settings: vcs(rev, "true")},
			versionInfo{Version: "v0.0.0-20261122160000-0123456789ab+dirty", Revision: rev, Modified: true},
			"v0.0.0-20261122160000-0123456789ab+dirty"},
		{"devel build with a revision", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")},
			versionInfo{Version: "dev", Revision: rev}, "devel-0123456789ab"},
		{"devel build, modified tree", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")},
			versionInfo{Version: "dev", Revision: rev, Modified: true}, "devel-0123456789ab-dirty"},
		{"make build's ldflag wins", "v1.3.0-4-gabcdef", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")},
			versionInfo{Version: "v1.3.0-4-gabcdef", Revision: rev}, "v1.3.0-4-gabcdef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildVersion(tt.ldflag, tt.info, tt.info != nil)
			if got != tt.want {
				t.Errorf("buildVersion = %+v, want %+v", got, tt.want)
			}
			if got.String() != tt.str {
				t.Errorf("String = %q, want %q", got.String(), tt.str)
			}
		})
	}
}

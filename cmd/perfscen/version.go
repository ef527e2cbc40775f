package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Example: `  perfscen version`,
		Short:   "Print perfscen's version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := thisBuild()
			rev := "revision unknown"
			if v.Revision != "" {
				rev = "revision " + v.Revision
				if v.Modified {
					rev += " (modified)"
				}
			}
			fmt.Fprintf(e.stdout, "perfscen %s (%s, %s, %s/%s)\n", v.Version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

// thisBuild is what this binary knows of its source.
func thisBuild() versionInfo {
	info, ok := debug.ReadBuildInfo()
	return buildVersion(ldflagVersion, info, ok)
}

// versionString is this build's one-word version, or the one a test gives.
func (e *env) versionString() string {
	if e.version != "" {
		return e.version
	}
	return thisBuild().String()
}

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
			info, ok := debug.ReadBuildInfo()
			v := buildVersion(ldflagVersion, info, ok)
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
